"""glibc's malloc as a serving process tunes it: free space at the heap's top is given back,
even after a large block has been freed (which, untuned, raises glibc's thresholds)."""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import subprocess
import sys

import pytest

from server.serving.memory import TRIM_THRESHOLD

_LIBC = ctypes.util.find_library("c")
pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux")
    or _LIBC is None
    or not hasattr(ctypes.CDLL(_LIBC), "mallinfo2"),
    reason="glibc 2.33 or later only",
)

# In a fresh process: free an 8 MiB block (mapped apart), then take 8 MiB of 200 KiB blocks
# from the heap and free them; report the free space left at the heap's top.
_SCRIPT = """
import ctypes, ctypes.util, json, sys
from server.serving.memory import tune_malloc

class Info(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]

tuned = tune_malloc() if sys.argv[1] == "tuned" else False
libc = ctypes.CDLL(ctypes.util.find_library("c"))
libc.malloc.restype, libc.malloc.argtypes = ctypes.c_void_p, [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
libc.mallinfo2.restype = Info
libc.free(libc.malloc(8 << 20))
blocks = [libc.malloc(200 << 10) for _ in range(40)]
for block in reversed(blocks):
    libc.free(block)
print(json.dumps({"tuned": tuned, "top": libc.mallinfo2().keepcost}))
"""


def _top_after_frees(mode: str) -> dict[str, int]:
    done = subprocess.run(
        [sys.executable, "-c", _SCRIPT, mode], capture_output=True, text=True, check=True
    )
    found: dict[str, int] = json.loads(done.stdout)
    return found


def test_a_tuned_process_gives_back_the_free_top_of_its_heap() -> None:
    untuned, tuned = _top_after_frees("untuned"), _top_after_frees("tuned")
    assert untuned["top"] > 4 << 20  # the large block raised the thresholds: 8 MiB kept
    assert tuned["tuned"]
    assert tuned["top"] <= TRIM_THRESHOLD

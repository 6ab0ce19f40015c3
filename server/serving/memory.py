"""glibc's malloc for a serving process: at most two arenas, and free memory at the top of
the heap given back.

Arenas: glibc gives each thread that allocates under contention an arena of its own, up to
eight per core, and a freed block stays in the arena of the thread that freed it. The cap
bounds the threads a process keeps (the stream relay's, uvloop's resolver).

Thresholds: by default glibc maps blocks over 128 KiB apart from its heap, and each time it
frees one it raises that threshold to the block's size (up to 32 MiB) and the threshold for
returning free space at the heap's top to twice that. After the demo seed, or one large
answer, a worker then keeps megabytes of free space at its top: under the soak on DynamoDB
Local that space grew with each request larger than any before it, and was never returned
(bench/README.md, "The DynamoDB Local soak's memory"). Setting the thresholds turns that
adjustment off.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
ARENAS = 2
MMAP_THRESHOLD = 256 * 1024
"""Blocks from this size up are mapped apart from the heap and unmapped when freed."""
TRIM_THRESHOLD = 1024 * 1024
"""Free space at the heap's top beyond this is returned to the system."""


def tune_malloc() -> bool:
    """Cap glibc's arenas and fix its mmap and trim thresholds (before threads are started);
    False where there is no glibc (musl, macOS), which needs none of it."""
    if not sys.platform.startswith("linux"):
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    mallopt = getattr(ctypes.CDLL(name), "mallopt", None)
    if mallopt is None:
        return False
    settings = (
        (_M_ARENA_MAX, ARENAS),
        (_M_MMAP_THRESHOLD, MMAP_THRESHOLD),
        (_M_TRIM_THRESHOLD, TRIM_THRESHOLD),
    )
    applied = [mallopt(option, value) == 1 for option, value in settings]  # each, whatever fails
    return all(applied)

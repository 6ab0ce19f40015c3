"""glibc's malloc for a serving process: at most two arenas.

glibc gives each thread that allocates under contention an arena of its own, up to eight per
core, and a freed block stays in the arena of the thread that freed it. The DynamoDB store
runs its calls on up to 64 threads, which parse answers into memory that the event loop's
thread frees later: under the soak's load on DynamoDB Local the process's anonymous memory
grew 29% in ten minutes with an arena per thread, 14% with two (bench/README.md).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import sys

_M_ARENA_MAX = -8
ARENAS = 2


def limit_malloc_arenas(arenas: int = ARENAS) -> bool:
    """Cap glibc's malloc arenas (before threads are started); False where there is no glibc
    (musl, macOS), which needs no such cap."""
    if not sys.platform.startswith("linux"):
        return False
    name = ctypes.util.find_library("c")
    if name is None:
        return False
    mallopt = getattr(ctypes.CDLL(name), "mallopt", None)
    return bool(mallopt is not None and mallopt(_M_ARENA_MAX, arenas) == 1)

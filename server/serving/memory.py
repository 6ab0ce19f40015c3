"""glibc's malloc for a serving process: at most two arenas.

glibc gives each thread that allocates under contention an arena of its own, up to eight per
core, and a freed block stays in the arena of the thread that freed it. When the DynamoDB
store ran its calls on a thread pool, under the soak's load on DynamoDB Local the process's
anonymous memory grew 29% in ten minutes with an arena per thread, 14% with two
(bench/README.md). Its calls now run on the event loop; the cap still bounds the threads a
process keeps (the stream relay's, uvloop's resolver).
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

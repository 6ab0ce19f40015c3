"""Headroom on CPython's frame data stack for a long-running event loop.

CPython 3.11+ keeps a thread's Python frames in chunks of 16 KiB, each mapped with `mmap`. Up
to 3.12 (and 3.13/3.14 before the fix for python/cpython#142183) a chunk is unmapped as soon as
the frame at its start returns, so a request whose calls keep crossing one chunk boundary maps
and unmaps a chunk at every crossing: thousands of system calls and page faults a request.
Whether a server does depends on the stack depth its event loop happened to start at.

`run_with_headroom(fn)` calls `fn` from a frame of 65,000 local slots: CPython gives that frame
a chunk of its own of 1 MiB, of which ~500 KiB stay free above it. The event loop `fn` starts,
and every request it serves, then run inside that one chunk, ~60,000 slots deep (far beyond
Python's recursion limit) before a boundary can be reached. The cost is one ~0.5 MiB frame,
once.
"""

from __future__ import annotations

from collections.abc import Callable
from types import FunctionType
from typing import TypeVar

T = TypeVar("T")

SLOTS = 65_000


def _call(fn: Callable[[], T]) -> T:
    return fn()


def _padded(slots: int) -> Callable[[Callable[[], T]], T]:
    """`_call` with `slots` local variables: its own argument and unused, unnamed ones."""
    code = _call.__code__
    names = code.co_varnames + ("_",) * (slots - code.co_nlocals)
    padded: Callable[[Callable[[], T]], T] = FunctionType(
        code.replace(co_varnames=names, co_nlocals=len(names)), {}
    )
    return padded


def run_with_headroom(fn: Callable[[], T]) -> T:
    """`fn()`, called from a frame that leaves ~500 KiB of data stack free above it."""
    return _padded(SLOTS)(fn)

"""The data stack headroom: `fn` runs as called, and repeated calls across what would be a
16 KiB chunk boundary no longer map a chunk each (counted as minor page faults)."""

from __future__ import annotations

import platform
import resource
import sys
from types import FunctionType

import pytest

from server.serving.datastack import run_with_headroom

LEAF_SLOTS = 400  # 3.2 KB: a call this big does not fit in the last ~28 frames of a chunk
DEPTHS = 300  # ~110 B a frame of `descend`: ~33 KB of depths, two chunk boundaries or more
CALLS = 50


def _leaf() -> None:
    return None


def _wide_leaf() -> FunctionType:
    code = _leaf.__code__
    return FunctionType(code.replace(co_varnames=("_",) * LEAF_SLOTS, co_nlocals=LEAF_SLOTS), {})


def _descend(depth: int, leaf: FunctionType) -> None:
    if depth:
        _descend(depth - 1, leaf)
        return
    for _ in range(CALLS):
        leaf()


def _sweep() -> int:
    """Minor page faults while calling a wide leaf CALLS times at each of DEPTHS depths."""
    leaf = _wide_leaf()
    _descend(DEPTHS, leaf)  # warm: whatever else the sweep allocates is in place
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for depth in range(DEPTHS):
        _descend(depth, leaf)
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before


def test_returns_what_fn_returns() -> None:
    assert run_with_headroom(lambda: ("answer", 42)) == ("answer", 42)


def test_exceptions_pass_through() -> None:
    def fail() -> None:
        raise LookupError("from inside")

    with pytest.raises(LookupError, match="from inside"):
        run_with_headroom(fail)


@pytest.mark.skipif(platform.python_implementation() != "CPython", reason="CPython's data stack")
def test_calls_across_a_chunk_boundary_map_no_chunks() -> None:
    with_headroom = min(run_with_headroom(_sweep) for _ in range(2))
    assert with_headroom < 300
    if sys.version_info < (3, 13):  # no chunk is kept for reuse: the sweep thrashes without it
        plain = min(_sweep() for _ in range(2))
        assert plain > 1_000
        assert with_headroom * 10 < plain

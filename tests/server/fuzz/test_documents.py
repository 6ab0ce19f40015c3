"""Hostile documents (tests/server/fuzz/documents.py) on both stores: each answer is bounded
and carries proper codes.

Bounded is counted, not timed: the Python function calls the server makes for a request
(sys.setprofile on the event loop's thread, where the app runs) must stay within a fixed
allowance per byte of the document, so a document whose handling grows faster than its size
(a fragment expanded once per path to it) fails the same way on any machine. A request
still unanswered after HANG_SECONDS hangs: a deadline, not a measure of the work.

CI sends each shape at fixed sizes around its limit and far past it;
KEYGRAPH_FUZZ_EXAMPLES=N sends N / HUNT_SHARE shapes at sizes drawn at random besides."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import strategies as st

from tests.conftest import StoreFactory
from tests.server.fuzz.checks import Failures, Work
from tests.server.fuzz.documents import SHAPES, Shape
from tests.server.fuzz.target import HUNT, STORES, Target, errors_logged, generate, open_target

CALLS_PER_BYTE = 100
BASE_CALLS = 60_000
"""What a request may cost in Python calls: BASE_CALLS plus CALLS_PER_BYTE for each byte of
its document. An ordinary query makes a few thousand calls; the costliest document within
the limits (2,000 tokens of one field, which graphql-core's overlap check compares pairwise
until its own budget stops it) about 90 a byte."""
HANG_SECONDS = 20.0
"""Seconds after which a request still unanswered hangs."""
HUNT_SHARE = 5
"""A hunt sends one drawn document for every HUNT_SHARE of KEYGRAPH_FUZZ_EXAMPLES."""


@pytest.fixture(params=STORES)
async def target(
    request: pytest.FixtureRequest, store_factory: StoreFactory, tmp_path: Path
) -> AsyncIterator[Target]:
    async with open_target(request.param, store_factory, tmp_path) as app:
        yield app


def documents() -> list[tuple[str, int]]:
    """(shape name, size) pairs: every shape at its fixed sizes, and a hunt's random ones."""
    fixed = [(shape.name, size) for shape in SHAPES for size in shape.sizes]
    drawn = generate(
        st.tuples(st.sampled_from([shape.name for shape in SHAPES]), st.integers(1, 40)),
        HUNT // HUNT_SHARE,
    )
    return fixed + [(name, _scaled(name, size)) for name, size in drawn]


def _scaled(name: str, size: int) -> int:
    """A drawn size for a shape: doubling fragment graphs at most 18 levels (past that a
    server expanding them naively would not answer within the hunt), the rest up to a
    hundred times 40."""
    return min(size, 18) if name.startswith("doubling") else size * 100


async def test_hostile_documents_get_bounded_answers_with_codes(
    target: Target, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    failures = Failures()
    by_name: dict[str, Shape] = {shape.name: shape for shape in SHAPES}
    for name, size in documents():
        document = by_name[name].make(size)
        case = f"{name} at {size} ({len(document)} bytes)"
        caplog.clear()
        with Work() as work:
            try:
                response = await asyncio.wait_for(
                    target.post({"query": document}), timeout=HANG_SECONDS
                )
            except TimeoutError:
                failures.add("hangs", case)
                continue
        allowed = BASE_CALLS + CALLS_PER_BYTE * len(document.encode())
        if work.calls > allowed:
            failures.add("work beyond the allowance", f"{case}: {work.calls} calls > {allowed}")
        failures.answer(response, case)
        for record in errors_logged(caplog.records):
            failures.add(f"error logged: {record}", case)
    assert not failures, "\n" + failures.report()

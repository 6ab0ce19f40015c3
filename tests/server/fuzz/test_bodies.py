"""Hostile HTTP requests (tests/server/fuzz/bodies.py) on both stores: none is answered with
a 5xx, a traceback or an error without a code, none logs an error, and none changes any data.
Every request is sent in CI (the set is small); a hunt also mutates valid bodies at random
bytes, KEYGRAPH_FUZZ_EXAMPLES times."""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from hypothesis import strategies as st

from tests.conftest import StoreFactory
from tests.server.fuzz.bodies import QUERY, REQUESTS, Request
from tests.server.fuzz.checks import Failures
from tests.server.fuzz.target import HUNT, STORES, Target, errors_logged, generate, open_target

VALID = json.dumps({"query": QUERY, "variables": {"a": [1, "x"]}, "operationName": None}).encode()


@pytest.fixture(params=STORES)
async def target(
    request: pytest.FixtureRequest, store_factory: StoreFactory, tmp_path: Path
) -> AsyncIterator[Target]:
    async with open_target(request.param, store_factory, tmp_path) as app:
        yield app


def mutated(count: int) -> list[Request]:
    """A valid body with bytes overwritten, inserted or cut at random places."""
    edits = st.lists(
        st.tuples(st.integers(0, len(VALID)), st.binary(max_size=3), st.integers(0, 3)),
        min_size=1,
        max_size=4,
    )
    found = []
    for changes in generate(edits, count):
        body = VALID
        for at, new, cut in changes:
            body = body[:at] + new + body[at + cut :]
        found.append(Request(f"mutated body {body[:80]!r}", content=body))
    return found


def _ide_page(response: httpx.Response) -> bool:
    """GraphiQL's page, which a GET without a query gets in dev mode."""
    media = response.headers.get("content-type", "")
    return response.status_code == 200 and media.startswith("text/html")


async def send(target: Target, request: Request) -> httpx.Response:
    headers = {"content-type": "application/json"}
    for name, value in (*target.acme.items(), *request.headers.items()):
        headers[name.lower()] = value
    return await target.client.request(
        request.method,
        "/graphql",
        content=request.stream(),
        params=request.params,
        headers=headers,
    )


async def test_hostile_requests_are_refused_with_codes(
    target: Target, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING)
    failures = Failures()
    items = await target.items()
    for request in REQUESTS + mutated(HUNT):
        caplog.clear()
        try:
            response = await send(target, request)
        except Exception as exc:  # the app raised instead of answering
            failures.add("HTTP 500 (the app raised)", f"{request.label}: {type(exc).__name__}")
            continue
        if request.method == "HEAD" or _ide_page(response):
            failures.status(response, request.label)
        else:
            failures.answer(response, request.label)
        for record in errors_logged(caplog.records):
            failures.add(f"error logged: {record}", request.label)
    if await target.items() != items:
        failures.add("a refused request wrote", "the table changed")
    assert not failures, "\n" + failures.report()

"""The contract suite's `store`: every test taking it runs on the embedded store and on
DynamoDB Local, over the shared TEST_TABLE."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import pytest

from keygraph.store import Store

KINDS = ("embedded", pytest.param("dynamodb-local", marks=pytest.mark.dynamodb_local))


@pytest.fixture(params=KINDS)
async def store(
    request: pytest.FixtureRequest, store_factory: Callable[[str], Awaitable[Store]]
) -> Store:
    return await store_factory(request.param)

"""The counting store (keygraph/stores/counting.py): the calls a request makes and the waves
they go out in, calls started together (or in turn inside one block) one wave."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from keygraph.plan import Get, TableDef
from keygraph.stores.counting import CountingStore
from keygraph.stores.embedded.store import EmbeddedStore

TABLE = TableDef(name="counted", partition_key="PK", sort_key="SK")
GET = Get(key={"PK": "nothing", "SK": "here"})


@pytest.fixture
async def counter(tmp_path: Path) -> AsyncIterator[CountingStore]:
    store = EmbeddedStore(TABLE, path=tmp_path / "counted.sqlite3")
    yield CountingStore(store)
    await store.close()


async def test_counting_store_counts_calls_and_waves(counter: CountingStore) -> None:
    await counter.get(GET)
    await counter.get(GET)
    assert (counter.calls, counter.waves) == (2, 2)
    await asyncio.gather(*(counter.get(GET) for _ in range(10)))
    assert (counter.calls, counter.waves) == (12, 3)


async def test_calls_made_in_turn_inside_one_wave_count_once(counter: CountingStore) -> None:
    async def in_turn(calls: int) -> None:
        with counter.one_wave():
            for _ in range(calls):
                await counter.get(GET)

    await in_turn(3)
    assert (counter.calls, counter.waves) == (3, 1)
    # blocks that other tasks start in the same turn of the loop join the wave
    await asyncio.gather(in_turn(2), in_turn(2), counter.get(GET))
    assert (counter.calls, counter.waves) == (8, 2)
    # a call that follows the wave's answers starts the next one
    await counter.get(GET)
    assert (counter.calls, counter.waves) == (9, 3)
    # a block that makes no call counts no wave
    await in_turn(0)
    assert (counter.calls, counter.waves) == (9, 3)

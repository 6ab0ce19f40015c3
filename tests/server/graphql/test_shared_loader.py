"""SharedLoader.load_many: one batch's keys waited on once, failures and cancellation as a
gather of shielded loads would give them."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from server.graphql.context import SharedLoader


async def _double(keys: Sequence[int]) -> list[int | BaseException]:
    await asyncio.sleep(0)
    return [ValueError(f"no {key}") if key < 0 else key * 2 for key in keys]


async def test_a_batch_of_keys_is_waited_on_once(monkeypatch: pytest.MonkeyPatch) -> None:
    shields = []
    real = asyncio.shield

    def counted(awaitable: asyncio.Future[int]) -> asyncio.Future[int]:
        shields.append(awaitable)
        return real(awaitable)

    monkeypatch.setattr(asyncio, "shield", counted)
    loader = SharedLoader(load_fn=_double)
    assert await loader.load_many(range(100)) == [key * 2 for key in range(100)]
    assert len(shields) == 1
    assert await loader.load_many([3, 1, 3]) == [6, 2, 6]  # cached: no wait at all
    assert len(shields) == 1


async def test_the_first_failure_in_order_raises_and_none_is_left_unretrieved() -> None:
    loader = SharedLoader(load_fn=_double)
    with pytest.raises(ValueError, match="no -1"):
        await loader.load_many([1, -1, -2])
    assert await loader.load_many([1, 2]) == [2, 4]


async def test_a_cancelled_caller_leaves_the_load_to_the_others() -> None:
    loader = SharedLoader(load_fn=_double)
    first = asyncio.ensure_future(loader.load_many([1, 2]))
    second = asyncio.ensure_future(loader.load_many([2, 3]))
    await asyncio.sleep(0)
    first.cancel()
    assert await second == [4, 6]
    assert first.cancelled()


async def test_a_batch_settles_without_a_callback_per_key(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    loop = asyncio.get_running_loop()
    scheduled = 0
    real = loop.call_soon

    def counted(*args: Any, **kwargs: Any) -> asyncio.Handle:
        nonlocal scheduled
        scheduled += 1
        return real(*args, **kwargs)

    monkeypatch.setattr(loop, "call_soon", counted)
    loader = SharedLoader(load_fn=_double)
    assert await loader.load_many(range(100)) == [key * 2 for key in range(100)]
    assert scheduled < 10

"""How subscribers of one change share its payload: the first resolves it, the others with
the same key wait for its bytes; a payload that may not be shared, a failed or cancelled
resolution, or another key, and each resolves its own."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest

from keygraph.realtime.changes import Change
from server.realtime.events import Events, Payload


def change() -> Change:
    return Change("acme", "USER", "UPDATED", None, "shard-0", "1")


class Subscriber(Events):
    """Events whose resolution is scripted: `outcome` is its (body, shareable), or an
    exception to raise; `gate` holds it until set."""

    def __init__(self, on: Change, key: bytes, outcome: Any, gate: asyncio.Event) -> None:
        executor = SimpleNamespace(context_value=SimpleNamespace(change=on, request_id="r"))
        super().__init__(None, executor, None, None, key, None)  # type: ignore[arg-type]
        self.outcome = outcome
        self.gate = gate
        self.resolved = 0

    async def _resolve(self, event: Any) -> tuple[Payload, bool]:
        self.resolved += 1
        await self.gate.wait()
        if isinstance(self.outcome, BaseException):
            raise self.outcome
        body, shareable = self.outcome
        return (body, 0), shareable


async def bodies(*subscribers: Subscriber) -> list[bytes | BaseException]:
    """Each subscriber's body of the event, the first starting first."""
    tasks = []
    for subscriber in subscribers:
        tasks.append(asyncio.create_task(subscriber.body(object())))
        await asyncio.sleep(0)
    subscribers[0].gate.set()
    for subscriber in subscribers:
        subscriber.gate.set()
    async with asyncio.timeout(2):
        return await asyncio.gather(*tasks, return_exceptions=True)


async def test_the_same_key_waits_for_the_first_resolution() -> None:
    on, gate = change(), asyncio.Event()
    first = Subscriber(on, b"k", (b'{"data":1}', True), gate)
    second = Subscriber(on, b"k", (b'{"data":2}', True), gate)
    assert await bodies(first, second) == [b'{"data":1}', b'{"data":1}']
    assert (first.resolved, second.resolved) == (1, 0)


async def test_another_key_resolves_its_own() -> None:
    on, gate = change(), asyncio.Event()
    first = Subscriber(on, b"k", (b'{"data":1}', True), gate)
    other = Subscriber(on, b"other", (b'{"data":2}', True), gate)
    assert await bodies(first, other) == [b'{"data":1}', b'{"data":2}']
    assert (first.resolved, other.resolved) == (1, 1)


@pytest.mark.parametrize(
    "outcome", [(b'{"errors":"INTERNAL"}', False), RuntimeError("boom"), asyncio.CancelledError()]
)
async def test_a_payload_not_shared_or_not_made_leaves_the_others_to_resolve(
    outcome: Any,
) -> None:
    on, gate = change(), asyncio.Event()
    first = Subscriber(on, b"k", outcome, gate)
    second = Subscriber(on, b"k", (b'{"data":2}', True), gate)
    first_body, second_body = await bodies(first, second)
    assert second_body == b'{"data":2}'
    assert (first.resolved, second.resolved) == (1, 1)
    if isinstance(outcome, tuple):
        assert first_body == outcome[0]
    else:
        assert type(first_body) is type(outcome)

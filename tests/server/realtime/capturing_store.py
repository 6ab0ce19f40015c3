"""A store that appends each write's change to a MemoryStream: the images before and after
every item written, as a store's change log records them (a test double, standing in for
the change log of the store itself)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from keygraph.plan import Check, Delete, Get, Item, Key, Put, Update
from keygraph.store import Store
from tests.server.realtime.memory_stream import KEY_NAMES, MemoryStream


def _key_of(action: Any) -> Key | None:
    if isinstance(action, Put):
        return {name: action.item[name] for name in KEY_NAMES}
    if isinstance(action, Update | Delete):
        return dict(action.key)
    return None


class CapturingStore:
    """`store`, with every write it makes appended to `stream`."""

    def __init__(self, store: Store, stream: MemoryStream) -> None:
        self.store = store
        self.stream = stream

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    async def _images(self, keys: Sequence[Key | None]) -> list[Item | None]:
        return [None if k is None else await self.store.get(Get(k, consistent=True)) for k in keys]

    def _record(self, old: Item | None, new: Item | None) -> None:
        if old is None and new is not None:
            self.stream.append("INSERT", new=new)
        elif old is not None and new is None:
            self.stream.append("REMOVE", old=old)
        elif old is not None and new is not None and old != new:
            self.stream.append("MODIFY", old=old, new=new)

    async def _captured(self, actions: Sequence[Any], write: Any) -> Any:
        keys = [_key_of(action) for action in actions]
        before = await self._images(keys)
        result = await write
        after = await self._images(keys)
        for old, new in zip(before, after, strict=True):
            self._record(old, new)
        return result

    async def put(self, plan: Put) -> None:
        await self._captured([plan], self.store.put(plan))

    async def update(self, plan: Update) -> Item:
        result: Item = await self._captured([plan], self.store.update(plan))
        return result

    async def delete(self, plan: Delete) -> None:
        await self._captured([plan], self.store.delete(plan))

    async def batch_write(self, actions: Sequence[Put | Delete]) -> None:
        await self._captured(actions, self.store.batch_write(actions))

    async def transact_write(
        self, actions: Sequence[Put | Update | Delete | Check], token: str | None = None
    ) -> None:
        await self._captured(actions, self.store.transact_write(actions, token))

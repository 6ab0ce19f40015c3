"""A worker's change stream under `serve --workers N`: the supervisor's relay
(server/serving/relay.py) asked over its Unix domain socket, never the store's own stream.

A failed connection is opened again on the next call (a few tries, then a StoreError the
hub logs before its next poll).
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from keygraph.errors import StoreError
from keygraph.streams import Batch, Partitions, Position, Shard, Trimmed
from keygraph.streams.wire import record_of_wire
from server.serving.relay import READ_LIMIT

CONNECT_TRIES = 5
CONNECT_PAUSE = 0.2
"""Seconds between tries to reach the relay."""
LINE_LIMIT = 64 * 1024 * 1024
"""The longest answer read: a batch of up to 1000 records with both images."""


class RelayUnavailable(StoreError):
    """The relay did not answer."""


class RelayedStream:
    """The ChangeStream served by the relay at `path`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._connection: tuple[asyncio.StreamReader, asyncio.StreamWriter] | None = None
        self._lock = asyncio.Lock()

    async def shards(self) -> list[Shard]:
        answer = await self._ask({"op": "shards"})
        return [Shard(shard_id, parent, closed) for shard_id, parent, closed in answer["shards"]]

    async def read(
        self, position: Position, limit: int = READ_LIMIT, *, within: Partitions | None = None
    ) -> Batch:
        request: dict[str, Any] = {
            "op": "read",
            "shard": position.shard_id,
            "after": position.after,
            "limit": limit,
        }
        if within is not None:
            request["within"] = {"attribute": within.attribute, "keys": list(within.keys)}
        return _batch(position, await self._ask(request))

    async def skip(self, position: Position) -> Batch:
        """Past the shard's records now; none of them crosses the socket where the relay's
        stream can skip them (Skipping)."""
        request = {"op": "skip", "shard": position.shard_id, "after": position.after}
        return _batch(position, await self._ask(request))

    async def close(self) -> None:
        if self._connection is not None:
            self._connection[1].close()
            self._connection = None

    async def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        async with self._lock:
            for attempt in range(CONNECT_TRIES):
                try:
                    answer = await self._exchange(request)
                    break
                except (OSError, ValueError, asyncio.IncompleteReadError) as exc:
                    await self.close()
                    if attempt == CONNECT_TRIES - 1:
                        raise RelayUnavailable(f"the stream relay did not answer: {exc}") from exc
                    await asyncio.sleep(CONNECT_PAUSE)
        error = answer.get("error")
        if error == "trimmed":
            raise Trimmed(answer["message"])
        if error is not None:
            raise StoreError(answer["message"])
        return answer

    async def _exchange(self, request: dict[str, Any]) -> dict[str, Any]:
        if self._connection is None:
            self._connection = await asyncio.open_unix_connection(str(self.path), limit=LINE_LIMIT)
        reader, writer = self._connection
        writer.write(json.dumps(request).encode() + b"\n")
        await writer.drain()
        line = await reader.readline()
        if not line:
            raise ConnectionResetError("the relay closed the connection")
        answer: dict[str, Any] = json.loads(line)
        return answer


def _batch(position: Position, answer: dict[str, Any]) -> Batch:
    """The batch the relay answered to a read or skip from `position`."""
    records = [record_of_wire(r) for r in answer["records"]]
    following = Position(position.shard_id, answer["after"])
    return Batch(records, following, answer["ended"], int(answer.get("skipped", 0)))

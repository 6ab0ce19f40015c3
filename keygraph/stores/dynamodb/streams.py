"""DynamoDB Streams read as the table's ChangeStream (keygraph.streams): signed JSON POSTs of
the Streams API over the store's own transport, its retry policy for throttling and
transient failures (every Streams call only reads, so any may be sent again), shard lineage
from DescribeStream, and shard iterators kept between polls of one shard.

A shard iterator is good for 15 minutes: a poller carries on with the iterator each answer
gives, so it calls GetShardIterator once per shard, and again only after a pause long enough
for its iterator to expire (ExpiredIteratorException), from the last record it read."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any, Literal, cast

from keygraph.errors import StoreNotConfigured, StoreUnavailable, ValidationError
from keygraph.streams import Batch, Position, Shard, StreamRecord, Trimmed

from .errors import map_error, retryable
from .retry import RetryPolicy
from .store import DynamoDBStore
from .transport import ServiceError, TransientError, Transport, default_endpoint
from .wire import deserialize_item

__all__ = ["DynamoDBChangeStream", "streams_endpoint"]

TARGET_PREFIX = "DynamoDBStreams_20120810."
VIEW_TYPE = "NEW_AND_OLD_IMAGES"
MAX_LIMIT = 1000
"""The most records one GetRecords returns."""
_EVENTS = frozenset({"INSERT", "MODIFY", "REMOVE"})


def streams_endpoint(endpoint_url: str, region: str) -> str:
    """Where the Streams API of a table at `endpoint_url` answers: its own host on AWS, the
    table's endpoint elsewhere (DynamoDB Local serves both APIs on one port)."""
    if endpoint_url.rstrip("/") == default_endpoint(region):
        return f"https://streams.dynamodb.{region}.amazonaws.com"
    return endpoint_url


def _no_stream(table: str, why: str) -> StoreNotConfigured:
    return StoreNotConfigured(
        f'table {table!r} {why}: declare `stream = "{VIEW_TYPE}"` in the spec\'s [table] and '
        f"run `table migrate`, or enable the table's stream with view type {VIEW_TYPE}"
    )


def _mapped(error: ServiceError) -> Exception:
    """The protocol's error for a Streams error that will not be retried."""
    if error.code == "TrimmedDataAccessException":
        return Trimmed(f"past the stream's retention: {error.message}")
    return map_error(error)


def lineage_order(shards: list[Shard]) -> list[Shard]:
    """`shards` with every parent before its children, in the order given otherwise; a
    shard whose parent is no longer kept comes first."""
    known = {shard.shard_id for shard in shards}
    children: dict[str | None, list[Shard]] = {}
    for shard in shards:
        parent = shard.parent_id if shard.parent_id in known else None
        children.setdefault(parent, []).append(shard)
    ordered: list[Shard] = []
    pending = list(reversed(children.get(None, [])))
    while pending:
        shard = pending.pop()
        ordered.append(shard)
        pending.extend(reversed(children.get(shard.shard_id, [])))
    return ordered


def decode_record(record: dict[str, Any]) -> StreamRecord:
    """A Streams record as the protocol's, its images decoded as the store decodes items."""
    change = record["dynamodb"]
    event = record["eventName"]
    if event not in _EVENTS:
        raise StoreUnavailable(f"DynamoDB Streams sent an unknown event {event!r}")
    old, new = change.get("OldImage"), change.get("NewImage")
    return StreamRecord(
        sequence=change["SequenceNumber"],
        event=cast(Literal["INSERT", "MODIFY", "REMOVE"], event),
        keys=deserialize_item(change["Keys"]),
        old=deserialize_item(old) if old is not None else None,
        new=deserialize_item(new) if new is not None else None,
        at=datetime.fromtimestamp(float(change["ApproximateCreationDateTime"]), UTC),
    )


class DynamoDBChangeStream:
    """The change stream of a DynamoDBStore's table, read through DynamoDB Streams with the
    store's endpoint, region, credentials and retry policy (`transport` and `retry` override
    them, for tests). The table must have a stream of view type NEW_AND_OLD_IMAGES."""

    def __init__(
        self,
        store: DynamoDBStore,
        *,
        transport: Transport | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.store = store
        data = store.transport
        self._owns_transport = transport is None
        self.transport = transport or Transport(
            streams_endpoint(data.endpoint_url, data.signer.region),
            data.signer.region,
            data.credentials,
            max_connections=4,
            target_prefix=TARGET_PREFIX,
        )
        self.retry = retry or store.retry
        self._arn: str | None = None
        self._iterators: dict[str, tuple[Position, str]] = {}
        """Per shard: the position last read up to and the iterator that reads on from it."""
        self.iterator_requests = 0
        """GetShardIterator calls made: a measure of iterator reuse."""

    async def _call(self, transport: Transport, operation: str, params: dict[str, Any]) -> Any:
        """`operation` sent again on throttling and transient failures (it only reads) as the
        store's policy allows; its other DynamoDB errors raised as ServiceError."""
        attempt, fresh, renewed = 1, False, False
        while True:
            try:
                return await transport.call(operation, params, fresh=fresh)
            except ServiceError as exc:
                if not retryable(exc):
                    raise
                failure: Exception = exc
                fresh = False
            except TransientError as exc:
                failure = exc
                fresh = exc.stale and not renewed
            if attempt >= self.retry.max_attempts:
                raise StoreUnavailable(
                    f"DynamoDB Streams unavailable after {attempt} attempts: {failure}"
                ) from failure
            if fresh:
                renewed = True
            else:
                await asyncio.sleep(self.retry.delay(attempt))
            attempt += 1

    async def _streams(self, operation: str, params: dict[str, Any]) -> Any:
        try:
            return await self._call(self.transport, operation, params)
        except ServiceError as exc:
            raise _mapped(exc) from exc

    async def stream_arn(self) -> str:
        """The ARN of the table's current stream (DescribeTable's LatestStreamArn);
        StoreNotConfigured when the table has none of view type NEW_AND_OLD_IMAGES."""
        if self._arn is None:
            name = self.store.table.name
            try:
                answer = await self._call(
                    self.store.transport, "DescribeTable", {"TableName": name}
                )
            except ServiceError as exc:
                raise map_error(exc) from exc
            table = answer["Table"]
            spec = table.get("StreamSpecification") or {}
            if not spec.get("StreamEnabled") or "LatestStreamArn" not in table:
                raise _no_stream(name, "has no stream")
            if spec.get("StreamViewType") != VIEW_TYPE:
                raise _no_stream(name, f"has a stream of view type {spec.get('StreamViewType')}")
            self._arn = str(table["LatestStreamArn"])
        return self._arn

    async def shards(self) -> list[Shard]:
        """Every shard DescribeStream lists, parents before their children; a shard with an
        ending sequence number is closed."""
        arn = await self.stream_arn()
        params: dict[str, Any] = {"StreamArn": arn}
        shards: list[Shard] = []
        while True:
            answer = await self._streams("DescribeStream", params)
            description = answer["StreamDescription"]
            for shard in description.get("Shards", ()):
                ending = shard.get("SequenceNumberRange", {}).get("EndingSequenceNumber")
                shards.append(
                    Shard(shard["ShardId"], shard.get("ParentShardId"), ending is not None)
                )
            last = description.get("LastEvaluatedShardId")
            if not last:
                return lineage_order(shards)
            params = {"StreamArn": arn, "ExclusiveStartShardId": last}

    async def _iterator(self, position: Position) -> str:
        params: dict[str, Any] = {
            "StreamArn": await self.stream_arn(),
            "ShardId": position.shard_id,
        }
        if position.after is None:
            params["ShardIteratorType"] = "TRIM_HORIZON"
        else:
            params.update(ShardIteratorType="AFTER_SEQUENCE_NUMBER", SequenceNumber=position.after)
        self.iterator_requests += 1
        try:
            answer = await self._call(self.transport, "GetShardIterator", params)
        except ServiceError as exc:
            if exc.code == "ResourceNotFoundException" and "Shard" in exc.message:
                raise Trimmed(
                    f"shard {position.shard_id} is not in the stream: past the retention, or "
                    f"never in it ({exc.message})"
                ) from exc
            raise _mapped(exc) from exc
        return str(answer["ShardIterator"])

    async def read(self, position: Position, limit: int = MAX_LIMIT) -> Batch:
        """Up to `limit` (at most 1000) records from `position`, in sequence order. The
        iterator of the previous read of this shard is used when it read up to `position`;
        an expired one is obtained again from `position`."""
        if limit < 1:
            raise ValidationError(f"a stream read takes a limit of at least 1, not {limit}")
        kept = self._iterators.get(position.shard_id)
        iterator = kept[1] if kept is not None and kept[0] == position else None
        params: dict[str, Any] = {"Limit": min(limit, MAX_LIMIT)}
        while True:
            fresh = iterator is None
            if iterator is None:
                iterator = await self._iterator(position)
            try:
                answer = await self._call(
                    self.transport, "GetRecords", {**params, "ShardIterator": iterator}
                )
                break
            except ServiceError as exc:
                if exc.code == "ExpiredIteratorException" and not fresh:
                    iterator = None
                    continue
                self._iterators.pop(position.shard_id, None)
                raise _mapped(exc) from exc
        records = [decode_record(record) for record in answer.get("Records", ())]
        after = records[-1].sequence if records else position.after
        following = Position(position.shard_id, after)
        next_iterator = answer.get("NextShardIterator")
        if next_iterator is None:
            self._iterators.pop(position.shard_id, None)
        else:
            self._iterators[position.shard_id] = (following, str(next_iterator))
        return Batch(records, following, ended=next_iterator is None)

    async def close(self) -> None:
        """Closes the Streams connections (the store's own stay open)."""
        self._iterators.clear()
        if self._owns_transport:
            self.transport.close()

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

from keygraph.errors import StoreUnavailable, ValidationError
from keygraph.streams import Batch, NoStream, Partitions, Position, Shard, StreamRecord, Trimmed

from .errors import map_error, retryable
from .retry import Attempts, RetryBudget, RetryPolicy
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


def _no_stream(table: str, why: str) -> NoStream:
    return NoStream(
        f'the table {table} {why}: set stream = "{VIEW_TYPE}" in [table] and run '
        "`keygraph table migrate`"
    )


def _check(position: Position) -> None:
    """ValidationError for a position no stream has, as DynamoDB Streams would answer (its
    shard ids are 28 to 65 characters, its sequence numbers 21 to 40 digits)."""
    shard, after = position.shard_id, position.after
    if not (shard.startswith("shardId-") and 28 <= len(shard) <= 65):
        raise ValidationError(f"not a shard of this stream: {shard!r}")
    if after is not None and not (after.isascii() and after.isdigit() and 21 <= len(after) <= 40):
        raise ValidationError(f"a sequence number is 21 to 40 decimal digits, not {after!r}")


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


def _partition_key(record: dict[str, Any], within: Partitions) -> object:
    """A Streams record's partition key, read from its wire form (a string key, else None)."""
    value = record["dynamodb"]["Keys"].get(within.attribute)
    return value.get("S") if isinstance(value, dict) else None


class DynamoDBChangeStream:
    """The change stream of a DynamoDBStore's table, read through DynamoDB Streams with the
    store's endpoint, region, credentials and retry policy (`transport` and `retry` override
    them, for tests). Records hold the images the stream's view type names (both for
    NEW_AND_OLD_IMAGES, what subscriptions need). On AWS the reader has connections of its
    own: `close` it."""

    def __init__(
        self,
        store: DynamoDBStore,
        *,
        transport: Transport | None = None,
        retry: RetryPolicy | None = None,
    ) -> None:
        self.store = store
        data = store.transport
        endpoint = streams_endpoint(data.endpoint_url, data.signer.region)
        # On the table's own endpoint the store's connections carry the Streams calls too
        # (and close with the store); the Streams host of AWS gets connections of its own.
        shared = data.pool if endpoint == data.endpoint_url else None
        self._owns_pool = transport is None and shared is None
        self.transport = transport or Transport(
            endpoint,
            data.signer.region,
            data.credentials,
            max_connections=4,
            pool=shared,
            target_prefix=TARGET_PREFIX,
        )
        self.retry = retry or store.retry
        self.budget = RetryBudget()
        """Apart from the store's: a Streams endpoint in trouble does not spend the table's."""
        self._arn: str | None = None
        self._iterators: dict[str, tuple[Position, str]] = {}
        """Per shard: the position last read up to and the iterator that reads on from it."""
        self.iterator_requests = 0
        """GetShardIterator calls made: a measure of iterator reuse."""

    async def _call(self, transport: Transport, operation: str, params: dict[str, Any]) -> Any:
        """`operation`, retried on throttling and transient failures under the store's
        policy and the reader's own retry budget (retry.py; every Streams call only reads);
        its other DynamoDB errors raised as ServiceError, for the caller to judge."""
        attempts = Attempts(self.retry, self.budget, operation, params)
        while True:
            try:
                answer = await transport.call(operation, params, fresh=attempts.fresh)
            except ServiceError as exc:
                if not retryable(exc):
                    raise
                wait = attempts.failed(exc)
            except TransientError as exc:
                wait = attempts.failed(exc)
            else:
                attempts.succeeded()
                return answer
            if wait:
                await asyncio.sleep(wait)

    async def _streams(self, operation: str, params: dict[str, Any]) -> Any:
        try:
            return await self._call(self.transport, operation, params)
        except ServiceError as exc:
            raise _mapped(exc) from exc

    async def stream_arn(self) -> str:
        """The ARN of the table's current stream (DescribeTable's LatestStreamArn); NoStream
        when the table has none."""
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
                raise await self._missing(position.shard_id) from exc
            raise _mapped(exc) from exc
        return str(answer["ShardIterator"])

    async def _missing(self, shard_id: str) -> Exception:
        """What a shard the stream does not have is: Trimmed when it is older than every shard
        kept (shard ids begin with their creation time), else not a shard of this stream."""
        kept = [shard.shard_id for shard in await self.shards()]
        if kept and shard_id < min(kept):
            return Trimmed(f"{shard_id} is past the stream's retention")
        return ValidationError(f"the stream has no shard {shard_id}")

    async def read(
        self, position: Position, limit: int = MAX_LIMIT, *, within: Partitions | None = None
    ) -> Batch:
        """Up to `limit` (1 to 1000) records from `position`, in sequence order (those
        `within` the partitions, when given: the others' images are never decoded). The
        iterator of the previous read of this shard is used when it read up to `position`;
        an expired one is obtained again from `position`."""
        if not 1 <= limit <= MAX_LIMIT:
            raise ValidationError(f"limit must be between 1 and {MAX_LIMIT}, not {limit}")
        _check(position)
        kept = self._iterators.get(position.shard_id)
        iterator = kept[1] if kept is not None and kept[0] == position else None
        params: dict[str, Any] = {"Limit": limit}
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
        raw = answer.get("Records", ())
        after = raw[-1]["dynamodb"]["SequenceNumber"] if raw else position.after
        if within is not None:
            raw = [record for record in raw if within.holds(_partition_key(record, within))]
        records = [decode_record(record) for record in raw]
        skipped = len(answer.get("Records", ())) - len(records)
        following = Position(position.shard_id, after)
        next_iterator = answer.get("NextShardIterator")
        if next_iterator is None:
            self._iterators.pop(position.shard_id, None)
        else:
            self._iterators[position.shard_id] = (following, str(next_iterator))
        return Batch(records, following, ended=next_iterator is None, skipped=skipped)

    async def close(self) -> None:
        """Closes the reader's own connections to the Streams host (the store's stay open)."""
        self._iterators.clear()
        if self._owns_pool:
            self.transport.close()

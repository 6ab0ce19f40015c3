"""Idempotency-Key: a retried mutation gets its first answer, and nothing is written again.

A key covers mutations only (as Stripe ignores one on a GET): a query carrying one runs as
if it had none, and nothing is kept for it. A key is the caller's own: its record is named
by a digest of the key and the whole caller (idempotency_key.py). Nothing is written for a
key until its request is admitted and about to run (keyed.py): a request refused before
(authentication, size, parse, validation, variables, limits, cost, the tenant's budget)
leaves no record. An admitted mutation then claims the record in the tenant's partition
(RUNNING, with a digest of the request), runs, then keeps its answer in the record (DONE)
for the window (`Limits.idempotency_window`, ten minutes by default). Within it:

- the same key and request: the kept answer, with `Idempotent-Replayed: true`;
- the same key with another request: 422, IDEMPOTENCY_KEY_REUSED;
- the same key while the first request still runs: the retry waits for its answer up to
  WAIT_SECONDS, then gets 409, IN_PROGRESS, with Retry-After.

A retry is admitted like any request (a tenant over its budget gets 429, and the kept answer
once it sends the retry again within its budget); answered from the record, it does not run,
and the points it was charged go back to its tenant.

An answer that asks the client to retry (429, 5xx, or a field error THROTTLED,
STORE_UNAVAILABLE or TIMEOUT in a 200) is not kept when the request wrote nothing: the
record goes, and the retry runs afresh. A failed request that may have written (a write
landed, or one was sent and its answer lost: StoreUnavailable.applied None, or cut off by
the timeout) is kept as UNKNOWN: running it again could apply it twice, and replaying its
failure would tell the client to retry forever, so every retry within the window answers
409, IDEMPOTENCY_OUTCOME_UNKNOWN: read the data back, and send a new key to try again.
Every transaction of a request with a key carries a ClientRequestToken
derived from the tenant, the key and its place in the request, so a transaction that landed
just before a timeout is not written twice by the retry.

A RUNNING record names its owner, the process running it (owners.py), and holds a lease the
owner renews every LEASE_SECONDS / 4 while the request runs. A retry takes the key over when
the owner is gone: at once when it ran on the same machine and its process has ended (a
worker that died), else once its lease has lapsed (LEASE_SECONDS, so a dead host's requests
are taken over within seconds, not after the request timeout). Records from before leases
are taken over after the request timeout plus LEASE_SLACK.

A retry that takes over runs the request again, on the data as the dead worker left it: its
transactions carry the same tokens as the first run's, so one the first run landed (within
DynamoDB's ten minutes, sent the same and in the same place) is not written twice, but what
the request reads first sees the first run's writes. A deleteUser whose delete had landed
answers NOT_FOUND, a createUser whose user exists answers its CONFLICT: the first run's
answer was never made, and the re-run's is the truth of the data now.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TypeVar

import orjson

from generated.keys.idempotency_record import key as record_key
from generated.models.enums import IdempotencyRecordState as State
from generated.models.idempotency_record import IdempotencyRecord
from keygraph.errors import ConditionFailed, StoreUnavailable
from keygraph.plan import Condition, Delete, Put, Update, WriteAction
from keygraph.store import Store
from keygraph.stores.view import Planned, StoreView
from server.edge import owners

REPLAYED = "Idempotent-Replayed"
WAIT_SECONDS = 5.0
POLL_SECONDS = 0.05
LEASE_SECONDS = 10.0
"""How long a RUNNING record stands unless its owner renews it: renewals come four times as
often, so three may be late (a slow store, a busy event loop) before another takes over."""
LEASE_SLACK = 5.0
MAX_KEPT_BYTES = 300_000
"""The largest answer kept (a DynamoDB item holds 400 KB); a larger one is kept as a
CONFLICT error saying the first request succeeded."""
log = logging.getLogger("keygraph.idempotency")
_ABSENT = (Condition("not_exists", "PK"),)
RETRY_CODES = frozenset({"THROTTLED", "STORE_UNAVAILABLE", "TIMEOUT"})
"""Codes of errors that ask the client to send the request again."""
UNKNOWN = "IDEMPOTENCY_OUTCOME_UNKNOWN"
_WRITES = frozenset({"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems"})
R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Answer:
    """An HTTP answer as kept in a record."""

    status: int
    media_type: str
    body: bytes


@dataclass(frozen=True, slots=True)
class Refused:
    status: int
    code: str
    message: str
    retry_after: int | None = None


@dataclass(frozen=True, slots=True)
class Claimed:
    """The request holds the key: run it, then `keep` or `release` the claim."""

    tenant: str
    key: str
    request: str
    created_at: str
    """The record's created_at as stored: the claim is this request's while it matches."""

    def mine(self) -> tuple[Condition, ...]:
        return (Condition("equals", "created_at", self.created_at),)


class Ledger:
    """The records of a store's Idempotency-Keys; `owner` names this process in its claims
    (owners.identity() by default), `lease` is LEASE_SECONDS unless given."""

    def __init__(
        self,
        store: Store,
        window: float,
        request_timeout: float,
        *,
        lease: float = LEASE_SECONDS,
        owner: str | None = None,
    ) -> None:
        self.store = store
        self.window = window
        self.lease = lease
        self.unleased = request_timeout + LEASE_SLACK
        self.owner = owner
        self._renewals: dict[Claimed, asyncio.Task[None]] = {}

    async def claim(self, tenant: str, key: str, request: str) -> Claimed | Answer | Refused:
        """Claim `key` for a request with digest `request`, or what to answer instead."""
        deadline = time.monotonic() + WAIT_SECONDS
        while True:
            now = datetime.now(UTC)
            record = IdempotencyRecord(
                idempotency_key=key,
                request_hash=request,
                state=State.RUNNING,
                created_at=now,
                expires_at=int(now.timestamp() + self.window),
                owner=self.owner or owners.identity(),
                lease_until=_millis(now.timestamp() + self.lease),
            )
            claim = Claimed(tenant, key, request, record.to_item(tenant)["created_at"])
            held = await self._put(tenant, record, _ABSENT)
            if held is None:
                return self._renewing(claim)
            if self._abandoned(held, now):
                same = (Condition("equals", "created_at", held.to_item(tenant)["created_at"]),)
                if await self._put(tenant, record, same) is None:
                    return self._renewing(claim)
                continue
            if held.request_hash != request:
                message = "this Idempotency-Key was used with another request"
                return Refused(422, "IDEMPOTENCY_KEY_REUSED", message)
            if held.state == State.DONE:
                return _answer(held)
            if time.monotonic() > deadline:
                message = "a request with this Idempotency-Key is still running; retry later"
                return Refused(409, "IN_PROGRESS", message, retry_after=1)
            await asyncio.sleep(POLL_SECONDS)

    def _abandoned(self, held: IdempotencyRecord, now: datetime) -> bool:
        """Whether a record stands for nothing any more: expired (TTL removes records late),
        or RUNNING with its owner gone."""
        if held.expires_at < now.timestamp():
            return True
        if held.state != State.RUNNING:
            return False
        if held.owner is not None and owners.gone(held.owner):
            return True
        if held.lease_until is not None:
            return held.lease_until < _millis(now.timestamp())
        return (now - held.created_at).total_seconds() > self.unleased

    def _renewing(self, claim: Claimed) -> Claimed:
        """`claim`, its lease renewed until it is kept or released."""
        self._renewals[claim] = asyncio.create_task(self._renew(claim))
        return claim

    async def _renew(self, claim: Claimed) -> None:
        key = record_key(claim.tenant, claim.key)
        running = (*claim.mine(), Condition("equals", "state", State.RUNNING.value))
        while True:
            await asyncio.sleep(self.lease / 4)
            lease_until = _millis(time.time() + self.lease)
            try:
                await self.store.update(
                    Update(key, set={"lease_until": lease_until}, conditions=running)
                )
            except ConditionFailed:
                return  # kept, released or taken over: no longer this request's
            except StoreUnavailable as exc:
                log.warning("the lease of Idempotency-Key %r was not renewed: %s", claim.key, exc)

    def _stop_renewing(self, claim: Claimed) -> None:
        renewal = self._renewals.pop(claim, None)
        if renewal is not None:
            renewal.cancel()

    async def _put(
        self, tenant: str, record: IdempotencyRecord, conditions: tuple[Condition, ...]
    ) -> IdempotencyRecord | None:
        """Write `record` if `conditions` hold: None, else the record that stood."""
        try:
            await self.store.put(Put(record.to_item(tenant), conditions=conditions))
        except ConditionFailed as exc:
            if exc.item is None:
                return record  # gone since: try again
            return IdempotencyRecord.from_item(exc.item)
        return None

    async def keep(self, claim: Claimed, answer: Answer, writes: Writes) -> None:
        """Keep the answer of the request holding `claim` for the window; an answer to
        retry releases the claim instead, or keeps it UNKNOWN when `writes` may have been
        applied."""
        self._stop_renewing(claim)
        if _asks_retry(answer):
            await self.fail(claim, writes)
            return
        await self._keep(claim, answer)

    async def fail(self, claim: Claimed, writes: Writes) -> None:
        """The request holding `claim` failed: release the key when it wrote nothing, else
        keep it UNKNOWN."""
        if writes.maybe_applied:
            await self._keep(claim, _unknown())
        else:
            await self.release(claim)

    async def _keep(self, claim: Claimed, answer: Answer) -> None:
        self._stop_renewing(claim)
        body = answer.body
        if len(body) > MAX_KEPT_BYTES:
            body = orjson.dumps({"errors": [_too_large()]})
        kept = {"status": answer.status, "media_type": answer.media_type, "body": body.decode()}
        now = datetime.now(UTC)
        record = IdempotencyRecord(
            idempotency_key=claim.key,
            request_hash=claim.request,
            state=State.DONE,
            response=orjson.dumps(kept).decode(),
            created_at=datetime.fromisoformat(claim.created_at),
            expires_at=int(now.timestamp() + self.window),
        )
        with contextlib.suppress(ConditionFailed):  # taken over meanwhile: theirs now
            await self.store.put(Put(record.to_item(claim.tenant), conditions=claim.mine()))

    async def release(self, claim: Claimed) -> None:
        """Give the key up: the next request with it runs."""
        self._stop_renewing(claim)
        with contextlib.suppress(ConditionFailed):
            key = record_key(claim.tenant, claim.key)
            await self.store.delete(Delete(key, conditions=claim.mine()))


def _millis(seconds: float) -> int:
    return int(seconds * 1000)


def _too_large() -> dict[str, object]:
    message = (
        "the first request with this Idempotency-Key succeeded; its answer is too large to repeat"
    )
    return {"message": message, "extensions": {"code": "CONFLICT"}}


def _asks_retry(answer: Answer) -> bool:
    """Whether `answer` asks the client to send the request again: 429, 5xx, or an error
    of RETRY_CODES (a store throttle answers 200 with THROTTLED on its field)."""
    if answer.status == 429 or answer.status >= 500:
        return True
    if b'"errors"' not in answer.body:  # no error: not parsed
        return False
    try:
        body = orjson.loads(answer.body)
    except orjson.JSONDecodeError:
        return False
    errors = body.get("errors") if isinstance(body, dict) else None
    if not isinstance(errors, list):
        return False
    for error in errors:
        extensions = error.get("extensions") if isinstance(error, dict) else None
        if isinstance(extensions, dict) and extensions.get("code") in RETRY_CODES:
            return True
    return False


def _unknown() -> Answer:
    message = (
        "the first request with this Idempotency-Key failed after it may have written; "
        "read the data back, and send a new key to try again"
    )
    body = orjson.dumps({"errors": [{"message": message, "extensions": {"code": UNKNOWN}}]})
    return Answer(409, "application/json", body)


def _answer(record: IdempotencyRecord) -> Answer:
    kept = orjson.loads(record.response or "{}")
    return Answer(int(kept["status"]), str(kept["media_type"]), str(kept["body"]).encode())


@dataclass(slots=True)
class Writes:
    """What a keyed request's writes did: whether any may have been applied."""

    maybe_applied: bool = False


class TokenedStore(StoreView):
    """A request's store whose transactions carry ClientRequestTokens derived from its
    tenant and Idempotency-Key, numbered in the order the request sends them; `writes`
    learns whether any write may have been applied: one that answered, one whose
    StoreUnavailable says it may have run, one cut off (cancelled) on its way."""

    def __init__(self, inner: Store, tenant: str, key: str, writes: Writes | None = None) -> None:
        super().__init__(inner)
        self._prefix = hashlib.sha256(f"{tenant}\0{key}".encode()).hexdigest()[:32]
        self._sent = 0
        self.writes = Writes() if writes is None else writes

    async def _call(self, kind: str, plan: Planned, call: Callable[[], Awaitable[R]]) -> R:
        if kind not in _WRITES:
            return await call()
        try:
            answer = await call()
        except StoreUnavailable as exc:
            if exc.applied is not False:
                self.writes.maybe_applied = True
            raise
        except asyncio.CancelledError:  # cut off (the timeout): it may have been sent
            self.writes.maybe_applied = True
            raise
        self.writes.maybe_applied = True
        return answer

    async def transact_write(
        self, actions: Sequence[WriteAction], token: str | None = None
    ) -> None:
        self._sent += 1
        mine = f"{self._prefix}-{self._sent}" if token is None else token
        await self._call(
            "TransactWriteItems", actions, lambda: self.inner.transact_write(actions, mine)
        )

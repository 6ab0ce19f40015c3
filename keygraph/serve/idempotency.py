"""Idempotency-Key for `keygraph serve`: a retried mutation gets its first answer, and nothing
is written again. A key is its caller's own (idempotency_key.py: its record is named by the
key with the tenant and the whole caller), and covers mutations only.

An admitted mutation claims its record (RUNNING, with a digest of the request) before it
runs, and keeps its answer there once it has one (DONE), for WINDOW seconds. Within them:
the same key and request answer the kept answer with `Idempotent-Replayed: true`; another
request under the key is 422 IDEMPOTENCY_KEY_REUSED; a retry while the first still runs
waits for its answer up to WAIT_SECONDS (claiming the key itself if the first gives it up),
then gets 409 IN_PROGRESS with Retry-After. An answer that asks for a retry (a 5xx, THROTTLED,
STORE_UNAVAILABLE, a 504 TIMEOUT) is not kept when the request wrote nothing (written.py):
the record goes, and the retry runs afresh. One that may have written (a write landed, or
was sent and its answer lost or cut off by the deadline) is kept as 409
IDEMPOTENCY_OUTCOME_UNKNOWN: running it again could apply it twice. A record left RUNNING by
a process that died is taken over once its window has passed. Each claim names its owner, a
random token: the record is settled only while that claim still holds it.

Records lie in the served table beside the spec's items, under a partition no tenant's
items use (PREFIX and the tenant), expiring by the table's TTL attribute when it has one."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
import time
from dataclasses import dataclass
from typing import Any

import orjson

from keygraph.errors import ConditionFailed
from keygraph.keycodec import escape
from keygraph.plan import Condition, Delete, Get, Item, Key, Put, TableDef, Update
from keygraph.store import Store

WINDOW = 600
"""Seconds a kept answer is replayed, as DynamoDB keeps a transaction's token."""
PREFIX = "~KEYGRAPH#IDEMPOTENCY#"
"""The partition of a tenant's records: no key template's literal text holds `~`
(codegen/keytemplate.py), so a spec's items never lie there unless a template starts with a
placeholder whose value does."""
RETRIED = frozenset({"THROTTLED", "STORE_UNAVAILABLE"})
"""Error codes of answers that ask for a retry, which are not kept."""
UNKNOWN = "IDEMPOTENCY_OUTCOME_UNKNOWN"
WAIT_SECONDS = 5.0
"""How long a retry waits for the answer of the first request still running with its key."""
POLL_SECONDS = (0.02, 0.5)
"""The first and the longest pause between two looks at a running key's record."""
"""The code a key's retries get when its first request failed after it may have written."""


@dataclass(frozen=True, slots=True)
class Claimed:
    """The request runs; its answer is then kept (or forgotten) under `key`, while the
    record is still this claim's (`owner`)."""

    key: Key
    owner: str


@dataclass(frozen=True, slots=True)
class Answered:
    """The request does not run: the kept answer, or a refusal, with its status."""

    status: int
    body: bytes
    headers: dict[str, str]


@dataclass(frozen=True, slots=True)
class Ledger:
    """The records of one served table."""

    store: Store
    table: TableDef
    window: int = WINDOW

    def key(self, tenant: str, name: str) -> Key:
        return {self.table.partition_key: PREFIX + escape(tenant), self.table.sort_key: name}

    def claiming(self, tenant: str, name: str) -> Claimed:
        """The claim a request named `name` makes, before it is made: a claim cut off on
        its way is given up by it (`fail`), whether it landed or not."""
        return Claimed(self.key(tenant, name), secrets.token_hex(8))

    async def claim(self, claimed: Claimed, digest: str) -> Claimed | Answered:
        """Makes the claim (`claiming`) on the request's record (digest: what makes two
        requests the same), or answers from the record: a request running with the key is
        waited for, WAIT_SECONDS at most, the pauses growing."""
        waited_until = time.monotonic() + WAIT_SECONDS
        pause = POLL_SECONDS[0]
        while True:
            outcome = await self._claim(claimed, digest)
            if outcome is not None:
                return outcome
            if time.monotonic() + pause > waited_until:
                return _refused(409, "IN_PROGRESS", "the key's first request still runs", retry=1)
            await asyncio.sleep(pause)
            pause = min(pause * 2, POLL_SECONDS[1])

    async def _claim(self, claimed: Claimed, digest: str) -> Claimed | Answered | None:
        """The claim made, or the answer from the record; None while another request runs
        with the key (or it was given up meanwhile: the next look claims it)."""
        key = claimed.key
        now = int(time.time())
        item: Item = {**key, "state": "RUNNING", "digest": digest, "at": now}
        item["owner"] = claimed.owner
        if self.table.ttl_attribute:
            item[self.table.ttl_attribute] = now + self.window
        absent = (Condition("not_exists", self.table.partition_key),)
        try:
            await self.store.put(Put(item, absent))
            return claimed
        except ConditionFailed as exc:
            held = exc.item or await self.store.get(Get(key, consistent=True))
        if held is None:  # gone meanwhile: the next look claims it
            return None
        if int(held.get("at", 0)) + self.window < now:
            taken = (Condition("equals", "at", held.get("at")),)
            try:
                await self.store.put(Put(item, taken))
                return claimed
            except ConditionFailed:
                return None  # another request took the key
        if held.get("digest") != digest:
            message = "this Idempotency-Key was sent with another request"
            return _refused(422, "IDEMPOTENCY_KEY_REUSED", message)
        if held.get("state") == "DONE":
            body = str(held.get("body", "")).encode()
            status = int(held.get("status", 200))
            return Answered(status, body, {"Idempotent-Replayed": "true"})
        return None

    async def settle(
        self,
        claimed: Claimed,
        status: int,
        body: bytes,
        codes: set[str],
        maybe_applied: bool = False,
    ) -> None:
        """Keeps the answer; one that asks for a retry is given up as `fail` says."""
        if status >= 500 or codes & RETRIED:
            await self.fail(claimed, maybe_applied)
        else:
            await self._keep(claimed, status, body)

    async def fail(self, claimed: Claimed, maybe_applied: bool) -> None:
        """The request failed, or was cut off: its claim is forgotten when it wrote nothing
        (the retry runs), else its retries are answered 409 IDEMPOTENCY_OUTCOME_UNKNOWN."""
        if maybe_applied:
            await self._keep(claimed, 409, _unknown())
            return
        with contextlib.suppress(ConditionFailed):  # not this claim's (it never landed)
            await self.store.delete(Delete(claimed.key, _held_by(claimed)))

    async def _keep(self, claimed: Claimed, status: int, body: bytes) -> None:
        kept = {"state": "DONE", "status": status, "body": body.decode()}
        with contextlib.suppress(ConditionFailed):  # taken over meanwhile: theirs now
            await self.store.update(Update(claimed.key, set=kept, conditions=_held_by(claimed)))


def _held_by(claimed: Claimed) -> tuple[Condition, ...]:
    return (Condition("equals", "owner", claimed.owner),)


def _unknown() -> bytes:
    message = (
        "the first request with this Idempotency-Key failed after it may have written; "
        "read the data back, and send a new key to try again"
    )
    return orjson.dumps({"errors": [{"message": message, "extensions": {"code": UNKNOWN}}]})


def _refused(status: int, code: str, message: str, retry: int | None = None) -> Answered:
    extensions: dict[str, Any] = {"code": code}
    headers: dict[str, str] = {}
    if retry is not None:
        extensions["retryAfter"] = retry
        headers["Retry-After"] = str(retry)
    body = orjson.dumps({"errors": [{"message": message, "extensions": extensions}]})
    return Answered(status, body, headers)

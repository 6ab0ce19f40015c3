"""Idempotency-Key for `keygraph serve`: a retried mutation gets its first answer, and nothing
is written again. A key is its caller's own (idempotency_key.py: its record is named by the
key with the tenant and the whole caller), and covers mutations only.

An admitted mutation claims its record (RUNNING, with a digest of the request) before it
runs, and keeps its answer there once it has one (DONE), for WINDOW seconds. Within them:
the same key and request answer the kept answer with `Idempotent-Replayed: true`; another
request under the key is 422 IDEMPOTENCY_KEY_REUSED; a retry while the first still runs is
409 IN_PROGRESS with Retry-After. An answer that asks for a retry (a 5xx, THROTTLED,
STORE_UNAVAILABLE) is not kept: the record goes, and the retry runs afresh. A record left
RUNNING by a process that died is taken over once its window has passed.

Records lie in the served table beside the spec's items, under a partition no tenant's
items use (PREFIX and the tenant), expiring by the table's TTL attribute when it has one."""

from __future__ import annotations

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


@dataclass(frozen=True, slots=True)
class Claimed:
    """The request runs; its answer is then kept (or forgotten) under `key`."""

    key: Key


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

    async def claim(self, tenant: str, name: str, digest: str) -> Claimed | Answered:
        """Claims the record of the request named `name` (digest: what makes two requests
        the same), or answers from it."""
        key = self.key(tenant, name)
        now = int(time.time())
        item: Item = {**key, "state": "RUNNING", "digest": digest, "at": now}
        if self.table.ttl_attribute:
            item[self.table.ttl_attribute] = now + self.window
        absent = (Condition("not_exists", self.table.partition_key),)
        try:
            await self.store.put(Put(item, absent))
            return Claimed(key)
        except ConditionFailed as exc:
            held = exc.item or await self.store.get(Get(key, consistent=True))
        if held is None:  # gone meanwhile: the next retry claims it
            return _refused(409, "IN_PROGRESS", "the key's request is finishing", retry=1)
        if int(held.get("at", 0)) + self.window < now:
            taken = (Condition("equals", "at", held.get("at")),)
            try:
                await self.store.put(Put(item, taken))
                return Claimed(key)
            except ConditionFailed:
                return _refused(409, "IN_PROGRESS", "another request took the key", retry=1)
        if held.get("digest") != digest:
            message = "this Idempotency-Key was sent with another request"
            return _refused(422, "IDEMPOTENCY_KEY_REUSED", message)
        if held.get("state") == "DONE":
            body = str(held.get("body", "")).encode()
            status = int(held.get("status", 200))
            return Answered(status, body, {"Idempotent-Replayed": "true"})
        return _refused(409, "IN_PROGRESS", "the key's first request still runs", retry=1)

    async def settle(self, claimed: Claimed, status: int, body: bytes, codes: set[str]) -> None:
        """Keeps the answer, or forgets the claim when the answer asks for a retry."""
        if status >= 500 or codes & RETRIED:
            await self.store.delete(Delete(claimed.key))
            return
        kept = {"state": "DONE", "status": status, "body": body.decode()}
        await self.store.update(Update(claimed.key, set=kept))


def _refused(status: int, code: str, message: str, retry: int | None = None) -> Answered:
    extensions: dict[str, Any] = {"code": code}
    headers: dict[str, str] = {}
    if retry is not None:
        extensions["retryAfter"] = retry
        headers["Retry-After"] = str(retry)
    body = orjson.dumps({"errors": [{"message": message, "extensions": extensions}]})
    return Answered(status, body, headers)

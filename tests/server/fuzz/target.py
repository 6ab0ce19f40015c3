"""What every fuzzer of the API shares: `make serve`'s app over one store seeded for two
tenants, the budget of a run (fixed and derandomized in CI, larger for a hunt) and the
checks every answer must pass."""

from __future__ import annotations

import json
import logging
import os
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keygraph.plan import Item, Scan
from keygraph.serve import create_app
from keygraph.serve.package import extension_at, served
from keygraph.store import Store
from keygraph.tokens import issue
from server.seed.tenant import SeedSizes
from tests.server.conftest import SECRET

SIZES = SeedSizes(users=6, orders=12, groups=2, org_nodes=7, org_depth=3, shops=12, max_members=4)
HUNT = int(os.environ.get("KEYGRAPH_FUZZ_EXAMPLES", "0"))
"""Set, a longer hunt: each fuzzer runs that many random cases (or its whole space) per
store instead of its fixed, derandomized CI set."""
STORES = ["embedded", pytest.param("dynamodb-local", marks=pytest.mark.dynamodb_local)]
LEAKS = re.compile(r'Traceback|File "|\.py\b|/work/|site-packages')
OWN_PREFIX = "KEYGRAPH#"
"""Partition keys of the server's own items (idempotency ledger, readiness probe)."""
TENANT_PREFIX = "T#"
"""How the partition key of a tenant's item starts: T#tenant#..."""

IDS = """{
  users(first: 10) { edges { node { id email
    orders(first: 5) { edges { node { id } } } groups { edges { node { id } } } } } }
  orgRoots(first: 10) { id descendants(first: 20) { edges { node { id } } } }
  shopsNear(lat: 52.52, lng: 13.405, radiusKm: 50, first: 10) { shop { id } }
}"""
"""The ids (and emails) of a tenant's objects, for the fuzzers to use."""

SNAPSHOT = (
    """{ users(first: 10) { edges { node { id email name createdAt version
      orders(first: 20) { edges { node { id status totalCents currency createdAt version
        items { sku name quantity unitPriceCents } } } } } } } }""",
    """{ users(first: 10) { edges { node { id
      groups(first: 10) { edges { node { id name members(first: 10) { edges { node { id } } } }
    } } } } } }""",
    """{ orgRoots(first: 10) { id name descendants(first: 20) { edges { node { id depth } } } }
      shopsNear(lat: 52.52, lng: 13.405, radiusKm: 50, first: 20) { distanceKm shop { id } } }""",
)
"""Everything the seed gives a tenant, in queries within the cost limit."""


def budget(ci: int, per_case: int = 1) -> int:
    """Cases a fuzzer runs: `ci` in CI; in a hunt one for every `per_case` of its count
    (a fuzzer whose cases are costly takes a share), `ci` at least."""
    return max(ci, HUNT // per_case) if HUNT else ci


class Target:
    """An app over one store, seeded for two tenants ("acme" is fuzzed, "globex" is the
    bystander whose data must never change), and an admin's bearer token of each."""

    def __init__(self, client: httpx.AsyncClient, store: Store, acme: str, globex: str) -> None:
        self.client = client
        self.store = store
        self.acme = {"Authorization": f"Bearer {acme}"}
        self.globex = {"Authorization": f"Bearer {globex}"}

    async def post(self, body: Any, headers: dict[str, str] | None = None) -> httpx.Response:
        """POST `body` (JSON-encoded by the standard library, so any int goes through) as
        acme."""
        content = json.dumps(body).encode()
        return await self.send(content, headers)

    async def send(
        self, content: bytes, headers: dict[str, str] | None = None, method: str = "POST"
    ) -> httpx.Response:
        """Raw bytes as acme, JSON content type unless `headers` say otherwise."""
        sent = {"content-type": "application/json", **self.acme, **(headers or {})}
        return await self.client.request(method, "/graphql", content=content, headers=sent)

    async def snapshot(self, headers: dict[str, str] | None = None) -> list[Any]:
        """A tenant's data (globex's by default) as the API reads it; every read must
        succeed."""
        found = []
        for query in SNAPSHOT:
            response = await self.client.post(
                "/graphql", json={"query": query}, headers=headers or self.globex
            )
            body = response.json()
            assert "errors" not in body, body["errors"]
            found.append(body["data"])
        return found

    async def items(self) -> list[Item]:
        """Every item of the table but the server's own, in key order: what a write
        changed, whether or not the API would show it."""
        return await scan(self.store)

    async def partition(self, tenant: str = "globex") -> list[Item]:
        """Every item of one tenant's partitions, in key order: what a write in another
        tenant must never change."""
        prefix = f"{TENANT_PREFIX}{tenant}#"
        return [item for item in await scan(self.store) if str(item["PK"]).startswith(prefix)]

    async def ids(
        self, tenants: tuple[str, ...] = ("acme", "globex"), query: str = IDS
    ) -> tuple[list[str], list[str]]:
        """Every id (a field named id or ending in Id) and email `query` finds, in the
        tenants named."""
        ids: list[str] = []
        emails: list[str] = []
        for tenant in tenants:
            headers = self.acme if tenant == "acme" else self.globex
            response = await self.client.post("/graphql", json={"query": query}, headers=headers)
            body = response.json()
            assert "errors" not in body, body["errors"]
            _collect(body["data"], ids, emails)
        return sorted(set(ids)), sorted(set(emails))


async def scan(store: Store) -> list[Item]:
    """Every item of the table but the server's own, in key order: what a write changed,
    whether or not the API would show it."""
    found: list[Item] = []
    start = None
    while True:
        page = await store.scan(Scan(start=start))
        found.extend(item for item in page.items if not str(item["PK"]).startswith(OWN_PREFIX))
        if page.last_key is None:
            break
        start = page.last_key
    return sorted(found, key=lambda item: (str(item["PK"]), str(item["SK"])))


def _collect(value: Any, ids: list[str], emails: list[str]) -> None:
    if isinstance(value, dict):
        for key, inner in value.items():
            if (key == "id" or key.endswith("Id")) and isinstance(inner, str):
                ids.append(inner)
            elif key == "email":
                emails.append(inner)
            else:
                _collect(inner, ids, emails)
    elif isinstance(value, list):
        for inner in value:
            _collect(inner, ids, emails)


@asynccontextmanager
async def open_app(store: Store) -> AsyncIterator[Target]:
    """`make serve`'s app (`keygraph serve --package generated --extend server.extension`)
    over `store` while it runs."""
    extension = extension_at("server.extension", "generated")
    app = create_app(served("generated", store, SECRET, [extension], dev=True))
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            acme, globex = (issue(SECRET, tenant, roles=["admin"]) for tenant in ("acme", "globex"))
            yield Target(client, store, acme, globex)


def check_answer(response: httpx.Response, case: object) -> dict[str, Any]:
    """The JSON body of an answer that passed the checks every answer must pass: no 5xx,
    no traceback or source path, a JSON object, every error with a code and none INTERNAL."""
    assert response.status_code < 500, (case, response.status_code, response.text[:2000])
    assert leaked(response.text, str(case)) is None, (case, response.text[:2000])
    body = response.json()
    assert isinstance(body, dict), (case, body)
    errors = body.get("errors", [])
    assert isinstance(errors, list), (case, body)
    for error in errors:
        code = error.get("extensions", {}).get("code")
        assert isinstance(code, str), (case, error)
        assert code, (case, error)
        assert code != "INTERNAL", (case, body)
    return body


def leaked(text: str, sent: str) -> str | None:
    """The first word of `text` that looks like a traceback or a source path and is not one
    the client sent (an id echoed in a message is the client's own)."""
    for match in LEAKS.finditer(text):
        start = max(text.rfind(c, 0, match.start()) for c in DELIMITERS) + 1
        ends = [text.find(c, match.end()) for c in DELIMITERS]
        word = text[start : min([end for end in ends if end != -1], default=len(text))]
        if word not in sent:
            return word
    return None


DELIMITERS = " '\"\n\\"
"""What ends a word of an answer's text."""


def codes(body: dict[str, Any]) -> list[str]:
    """The codes of an answer's errors."""
    return [error["extensions"]["code"] for error in body.get("errors", [])]


def errors_logged(records: list[logging.LogRecord]) -> list[str]:
    """The error-level log records of a run, each as its message and exception type: a bug
    each (bad input logs warnings at most)."""
    return [
        f"{record.getMessage()}"
        + (f" ({record.exc_info[0].__name__})" if record.exc_info and record.exc_info[0] else "")
        for record in records
        if record.levelno >= logging.ERROR
    ]


def generate(strategy: st.SearchStrategy[Any], count: int) -> list[Any]:
    """`count` examples drawn from `strategy`, the same ones on every run but a hunt."""
    found: list[Any] = []
    if count < 1:
        return found

    @settings(
        max_examples=count,
        deadline=None,
        derandomize=not HUNT,
        database=None,
        suppress_health_check=list(HealthCheck),
    )
    @given(example=strategy)
    def collect(example: Any) -> None:
        found.append(example)

    collect()
    return found

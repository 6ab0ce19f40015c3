"""A spec's writes served by two `keygraph serve` processes on one SQLite file
(tests/codegen/cases/social): writes racing through both keep each invariant the spec
declares — one member per handle, a product's reviews never above its cap and always its
count, each review's copy equal to it."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from httpx_ws import AsyncWebSocketSession, aconnect_ws

from keygraph.stores import EmbeddedStore
from keygraph.stores.dynamodb.local import free_port
from keygraph.tokens import issue
from keygraph.writes import owned
from tests.keygraph.api.conftest import CASES, Compiled
from tests.keygraph.api.test_writes import (
    DELETE_MEMBER,
    Api,
    assert_copies_equal,
    by_type,
    items,
    left_of_m1,
    member,
    owner_with_items,
)
from tests.waiting import answering, wait_for

SPEC = CASES / "social" / "spec.toml"
SECRET = "served-writes-secret-" + "s" * 32
ROOT = Path(__file__).parents[3]


@pytest.fixture
def servers(tmp_path: Path) -> Iterator[tuple[list[str], Path]]:
    """Two serving processes of the spec on one SQLite file: their URLs, and the file."""
    db = tmp_path / "shared.sqlite3"
    processes, urls = [], []
    try:
        for _ in range(2):
            process, url = serve(db)
            processes.append(process)
            urls.append(url)
        yield urls, db
    finally:
        for process in processes:
            process.terminate()
            process.wait(30)


def serve(db: Path) -> tuple[subprocess.Popen[bytes], str]:
    """A `keygraph serve` process of the spec on `db`, answering, and its URL."""
    port = free_port()
    command = [sys.executable, "-m", "codegen", "serve", "--spec", str(SPEC)]
    command += ["--db", str(db), "--port", str(port)]
    env = {**os.environ, "KEYGRAPH_JWT_SECRET": SECRET}
    process = subprocess.Popen(command, cwd=db.parent, env=env)
    url = f"http://127.0.0.1:{port}"
    answering(f"{url}/healthz", running(process))
    return process, url


def running(process: subprocess.Popen[bytes]) -> Callable[[], bool]:
    return lambda: process.poll() is None


def send(url: str, subject: str, document: str, role: str = "member") -> dict[str, Any]:
    token = issue(SECRET, "acme", subject, roles=[role])
    headers = {"authorization": f"Bearer {token}"}
    answer: dict[str, Any] = httpx.post(
        f"{url}/graphql", json={"query": document}, headers=headers, timeout=30
    ).json()
    return answer


def outcome(answer: dict[str, Any]) -> str:
    return str(answer["errors"][0]["extensions"]["code"]) if "errors" in answer else "OK"


async def test_two_servers_racing_keep_every_invariant(
    servers: tuple[list[str], Path], compiled: Callable[[Path], Compiled]
) -> None:
    urls, db = servers
    claim = 'mutation {{ createMember(input: {{memberId: "{0}", handle: "same", name: "N"}})'
    claim += " {{ member {{ memberId }} }} }}"
    review = 'mutation {{ createReview(input: {{memberId: "{0}", productId: "p1", stars: 4}})'
    review += " {{ review {{ version }} }} }}"
    product = (
        'mutation { createProduct(input: {productId: "p1", title: "Tea"}) { product { title } } }'
    )
    assert outcome(send(urls[0], "boss", product, "admin")) == "OK"
    with ThreadPoolExecutor(8) as pool:
        claims = list(
            pool.map(lambda i: send(urls[i % 2], f"m{i}", claim.format(f"m{i}")), range(8))
        )
        reviews = list(
            pool.map(lambda i: send(urls[i % 2], f"r{i}", review.format(f"r{i}")), range(8))
        )
    assert sorted(map(outcome, claims)) == ["CONFLICT"] * 7 + ["OK"]
    assert sorted(map(outcome, reviews)) == ["BAD_USER_INPUT"] * 5 + ["OK"] * 3
    store = EmbeddedStore(compiled(SPEC).table, path=db)
    try:
        stored = await items(store)
        assert len(by_type(stored, "HANDLE")) == 1 == len(by_type(stored, "MEMBER"))
        (counted,) = by_type(stored, "PRODUCT")
        assert counted["review_count"] == 3 == len(by_type(stored, "REVIEW"))
        await assert_copies_equal(store)
    finally:
        await store.close()


async def test_a_write_through_one_server_reaches_a_subscriber_of_the_other(
    servers: tuple[list[str], Path],
) -> None:
    urls, _db = servers
    create = 'mutation { createMember(input: {memberId: "m1", handle: "ann", name: "Ann"})'
    create += " { member { version } } }"
    rename = 'mutation { updateMember(input: {memberId: "m1", expectedVersion: 1, handle: "bo"})'
    rename += " { member { version } } }"
    watch = 'subscription { memberChanged(memberId: "m1") { kind member { handle } } }'
    token = issue(SECRET, "acme", "m1", roles=["member"])
    async with httpx.AsyncClient() as client, contextlib.AsyncExitStack() as stack:
        ws: AsyncWebSocketSession = await stack.enter_async_context(
            aconnect_ws(f"{urls[0]}/graphql", client, subprotocols=["graphql-transport-ws"])
        )
        await ws.send_json(
            {"type": "connection_init", "payload": {"authorization": f"Bearer {token}"}}
        )
        assert (await ws.receive_json(timeout=30))["type"] == "connection_ack"
        await ws.send_json({"type": "subscribe", "id": "w", "payload": {"query": watch}})
        assert outcome(send(urls[1], "m1", create)) == "OK"
        # the subscription starts on the other process meanwhile: rename until it tells
        deadline, version = time.monotonic() + 30, 1
        while True:
            renamed = rename.replace("expectedVersion: 1", f"expectedVersion: {version}")
            assert outcome(send(urls[1], "m1", renamed.replace('"bo"', f'"bo{version}"'))) == "OK"
            version += 1
            with contextlib.suppress(TimeoutError):
                told = await ws.receive_json(timeout=1)
                break
            assert time.monotonic() < deadline, "no event reached the other server's subscriber"
        change = told["payload"]["data"]["memberChanged"]
        assert change["kind"] in ("CREATED", "UPDATED")
        assert change["member"]["handle"] in ("ann", *(f"bo{v}" for v in range(1, version)))


async def test_a_cascade_killed_midway_is_finished_by_the_next_server(
    tmp_path: Path, compiled: Callable[[Path], Compiled], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A member deleted with many posts, reviews and friendships, its delete cut short after
    a page: a server sweeping the rest is SIGKILLed midway, which leaves the member gone and
    every count and copy whole, and the next server finishes the cascade."""
    package = compiled(SPEC)
    db = tmp_path / "shared.sqlite3"
    store = EmbeddedStore(package.table, path=db)
    api = Api(package, store)
    try:
        await owner_with_items(api, posts=400)
        monkeypatch.setattr(owned, "INLINE_SECONDS", 0.0)
        assert "errors" not in await api(DELETE_MEMBER, member("m1"))
        before = len(left_of_m1(await items(store)))
        first, _ = serve(db)
        try:
            wait_for(lambda: len(left_of_m1(stored_now(package, db))) < before, "a page swept")
        finally:
            first.kill()
            first.wait(30)
        stored = await items(store)
        assert [i["member_id"] for i in by_type(stored, "MEMBER")] == ["m2"]
        (product,) = by_type(stored, "PRODUCT")
        assert product["review_count"] == len(by_type(stored, "REVIEW"))
        await assert_copies_equal(store)
        friendships = {(i["member_id"], i["friend_id"]) for i in by_type(stored, "FRIEND")}
        assert friendships in (set(), {("m1", "m2"), ("m2", "m1")})
        second, _ = serve(db)
        try:
            wait_for(lambda: left_of_m1(stored_now(package, db)) == [], "the cascade to end", 60)
        finally:
            second.terminate()
            second.wait(30)
    finally:
        await store.close()


def stored_now(package: Compiled, db: Path) -> list[dict[str, Any]]:
    """Every item of the file, read from outside the event loop."""

    async def read() -> list[dict[str, Any]]:
        store = EmbeddedStore(package.table, path=db)
        try:
            return await items(store)
        finally:
            await store.close()

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, read()).result()

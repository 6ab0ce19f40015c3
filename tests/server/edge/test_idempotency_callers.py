"""Idempotency-Key and who sends it: a kept answer is the whole caller's own (tenant, sub,
roles, claims), and a query's key is ignored; on each store."""

from __future__ import annotations

import time
import uuid
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest

from generated.keys.idempotency_record import key as record_key
from keygraph.caller import Caller
from keygraph.plan import Get
from keygraph.serve.idempotency_key import record_name
from server.auth.tokens import issue_token
from server.settings import Settings
from tests.server.conftest import SECRET, World
from tests.server.edge.test_idempotency import CREATE, USERS

REPLAYED = "Idempotent-Replayed"


@pytest.fixture
def key() -> str:
    """A key of this test's own: DynamoDB Local remembers a transaction's token (derived
    from the key) across the tables of a run."""
    return f"K-{uuid.uuid4()}"


@pytest.fixture
def settings(tmp_path: Path) -> Settings:
    """Production mode: answers as a client gets them."""
    return Settings(data_dir=tmp_path, jwt_secret=SECRET).resolved()


async def send(
    world: World, token: str, key: str, query: str, variables: dict[str, Any] | None = None
) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}", "Idempotency-Key": key}
    body = {"query": query, "variables": variables or {}}
    return await world.client.post("/graphql", json=body, headers=headers)


def codes(response: httpx.Response) -> list[str]:
    return [error["extensions"]["code"] for error in response.json().get("errors", ())]


def signed(claims: dict[str, Any]) -> str:
    """A token of acme with these claims, valid for an hour."""
    now = int(time.time())
    return jwt.encode({"tenant": "acme", "iat": now, "exp": now + 3600, **claims}, SECRET)


CREATE_IDA: dict[str, Any] = {"i": {"email": "ida@example.org", "name": "Ida"}}


@pytest.mark.parametrize("subject", ["alice", None], ids=["same-sub", "no-sub"])
async def test_an_answer_is_not_replayed_to_a_caller_with_other_roles(
    world: World, settings: Settings, subject: str | None, key: str
) -> None:
    admin = issue_token(settings, "acme", subject, roles=["admin"])
    member = issue_token(settings, "acme", subject, roles=["member"])
    first = await send(world, admin, key, CREATE, CREATE_IDA)
    assert first.json()["data"]["createUser"]["email"] == "ida@example.org"

    theirs = await send(world, member, key, CREATE, CREATE_IDA)
    # the member's request runs as its own: refused by its roles, neither replayed nor 422
    assert REPLAYED not in theirs.headers
    assert theirs.status_code == 200
    assert codes(theirs) == ["FORBIDDEN"]

    again = await send(world, admin, key, CREATE, CREATE_IDA)
    assert again.headers.get(REPLAYED) == "true"
    assert again.json() == first.json()


async def test_an_answer_is_bound_to_the_callers_other_claims(world: World, key: str) -> None:
    sales: dict[str, Any] = {"sub": "alice", "roles": ["admin"], "department": "sales"}
    first = await send(world, signed(sales), key, CREATE, CREATE_IDA)
    assert first.json()["data"]["createUser"]["email"] == "ida@example.org"

    ops = await send(world, signed({**sales, "department": "ops"}), key, CREATE, CREATE_IDA)
    assert REPLAYED not in ops.headers
    assert codes(ops) == ["CONFLICT"]  # runs as its own: the email is taken

    # the same caller with a fresh token (another iat and exp) retries under the same record
    fresh = signed({**sales, "exp": int(time.time()) + 7200})
    again = await send(world, fresh, key, CREATE, CREATE_IDA)
    assert again.headers.get(REPLAYED) == "true"
    assert again.json() == first.json()


async def test_a_query_with_a_key_runs_as_if_it_had_none(
    world: World, settings: Settings, key: str
) -> None:
    await world.acme.create_user("ida@example.org", "Ida")
    admin = issue_token(settings, "acme", "alice", roles=["admin"])
    member = issue_token(settings, "acme", "alice", roles=["member"])

    everyone = await send(world, admin, key, USERS)
    assert everyone.json()["data"]["users"]["edges"] == [{"node": {"email": "ida@example.org"}}]

    mine = await send(world, member, key, USERS)
    assert REPLAYED not in mine.headers
    assert mine.json()["data"]["users"]["edges"] == [{"node": {"email": None}}]
    assert codes(mine) == ["FORBIDDEN"]

    again = await send(world, admin, key, USERS)
    assert REPLAYED not in again.headers
    assert again.json()["data"] == everyone.json()["data"]

    for roles in (["admin"], ["member"]):
        name = record_name("acme", Caller("alice", frozenset(roles)), key)
        assert await world.store.get(Get(record_key("acme", name), consistent=True)) is None

"""Requests for persisted operations: a document sent by its hash (Apollo's automatic
persisted queries), over POST and GET."""

from __future__ import annotations

import json
from typing import Any

import httpx

from keygraph.serve.manifest import sha256

USERS = "query Users($n: Int) { users(first: $n) { edges { node { email } } } }"
CREATE = "mutation($i: CreateUserInput!) { createUser(input: $i) { email } }"


def persisted(query: str) -> dict[str, Any]:
    """The `extensions` naming `query` by its hash."""
    return {"persistedQuery": {"version": 1, "sha256Hash": sha256(query)}}


async def post(
    client: httpx.AsyncClient,
    token: str,
    body: dict[str, Any],
    headers: dict[str, str] | None = None,
) -> httpx.Response:
    return await client.post(
        "/graphql", json=body, headers={"Authorization": f"Bearer {token}", **(headers or {})}
    )


async def get(client: httpx.AsyncClient, token: str, params: dict[str, Any]) -> httpx.Response:
    encoded = {k: v if isinstance(v, str) else json.dumps(v) for k, v in params.items()}
    return await client.get(
        "/graphql", params=encoded, headers={"Authorization": f"Bearer {token}"}
    )


def codes(response: httpx.Response) -> list[str]:
    return [error["extensions"]["code"] for error in response.json().get("errors", ())]

"""The cap on a node's children holds when the creates racing for its last places land on
two worker processes of one server (one embedded store file)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import httpx

from server.domain.org import MAX_CHILDREN
from tests.server.serving.test_serve import Server

CREATE = """mutation($name: String!, $parent: ID) {
  createOrgNode(input: {name: $name, parentId: $parent}) { id } }"""
CHILDREN = "query($id: ID!) { orgNode(id: $id) { children { id } } }"


async def test_creates_on_two_workers_stop_at_the_cap(tmp_path: Path) -> None:
    server = Server(tmp_path / "data", "--workers", "2")
    try:
        await asyncio.to_thread(server.wait_healthy)
        headers = {"Authorization": f"Bearer {server.token}"}
        # a connection each, so the requests spread over both workers
        limits = httpx.Limits(max_keepalive_connections=0)
        async with httpx.AsyncClient(base_url=server.url, headers=headers, limits=limits) as c:

            async def create(name: str, parent: str | None) -> dict[str, Any]:
                variables = {"name": name, "parent": parent}
                response = await c.post("/graphql", json={"query": CREATE, "variables": variables})
                body: dict[str, Any] = response.json()
                return body

            parent = (await create("parent", None))["data"]["createOrgNode"]["id"]
            for start in range(0, MAX_CHILDREN - 5, 10):
                end = min(start + 10, MAX_CHILDREN - 5)
                await asyncio.gather(*(create(f"child {n}", parent) for n in range(start, end)))
            bodies = await asyncio.gather(*(create(f"racer {n}", parent) for n in range(30)))
            codes = [[e["extensions"]["code"] for e in b.get("errors") or []] for b in bodies]
            assert codes.count([]) == 5
            assert codes.count(["BAD_USER_INPUT"]) == 25, codes
            query = {"query": CHILDREN, "variables": {"id": parent}}
            listed = (await c.post("/graphql", json=query)).json()["data"]["orgNode"]
            assert len(listed["children"]) == MAX_CHILDREN
    finally:
        server.stop()

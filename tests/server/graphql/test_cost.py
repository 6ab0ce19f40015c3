"""Query cost over HTTP: the limit refusing an operation before it runs, `extensions.cost`
on every response, and the objects a response actually holds (the estimate itself:
tests/keygraph/api/test_cost.py)."""

from __future__ import annotations

from typing import Any

import pytest

from bench.limits import ATTACK, readme_query
from keygraph.serve.budget import CAPACITY
from keygraph.serve.limits import MAX_COST
from keygraph.serve.served import MEDIA
from tests.server.conftest import Api


async def _refused(api: Api, query: str) -> dict[str, Any]:
    """The body of a request refused before it runs, asked as GraphQL over HTTP's media type
    (both servers then answer 400)."""
    headers = {"Authorization": f"Bearer {api.token}", "Accept": MEDIA}
    response = await api.client.post("/graphql", json={"query": query}, headers=headers)
    assert response.status_code == 400, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_an_operation_over_the_limit_runs_nothing(acme: Api) -> None:
    body = await _refused(acme, ATTACK)
    assert [e["extensions"]["code"] for e in body["errors"]] == ["QUERY_TOO_COMPLEX"]
    assert body["errors"][0]["extensions"]["cost"] == 1_010_100
    assert body["errors"][0]["extensions"]["limit"] == MAX_COST
    assert body["extensions"]["storeCalls"] == 0
    four = " ".join(f"a{i}: {ATTACK[1:-1]}" for i in range(4))
    body = await _refused(acme, f"{{ {four} }}")
    assert body["errors"][0]["extensions"]["cost"] == 4 * 1_010_100


async def test_every_response_reports_its_cost(acme: Api) -> None:
    users = [await acme.create_user(f"u{i}@example.com") for i in range(3)]
    groups = "groups { edges { node { id } } }"
    body = await acme(f"{{ users(first: 10) {{ edges {{ node {{ id {groups} }} }} }} }}")
    report = body["extensions"]["cost"]
    assert report["requested"] == 10 * (1 + 20)
    assert report["actual"]["objects"] == len(users)
    assert report["actual"]["storeCalls"] == body["extensions"]["storeCalls"]
    assert report["actual"]["readUnits"] > 0
    assert report["budget"]["capacity"] == CAPACITY
    assert 0 < report["budget"]["remaining"] <= CAPACITY
    failed = await _refused(acme, "{ nope }")
    assert failed["extensions"]["cost"]["requested"] == 0
    assert "budget" in failed["extensions"]["cost"]


async def test_readme_query_runs(acme: Api) -> None:
    data = await acme.data(readme_query())
    assert data["viewer"]["tenant"] == "acme"


@pytest.mark.parametrize("first", [0, 3])
async def test_children_first_is_honoured(acme: Api, first: int) -> None:
    root = (await acme.data('mutation { createOrgNode(input: {name: "r"}) { id } }'))[
        "createOrgNode"
    ]["id"]
    for name in "abcde":
        await acme.data(
            "mutation($p: ID!, $n: String!) { createOrgNode(input: {name: $n, parentId: $p}) "
            "{ id } }",
            {"p": root, "n": name},
        )
    data = await acme.data(
        "query($id: ID!, $f: Int) { orgNode(id: $id) { children(first: $f) { name } } }",
        {"id": root, "f": first},
    )
    assert [c["name"] for c in data["orgNode"]["children"]] == list("abcde")[:first]

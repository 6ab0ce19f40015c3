"""The cost of an operation on a generated API (keygraph.api.cost), on this repository's
spec: the most items its answer can hold, pages of relations multiplied, aliases and
fragments counted, a union at its costliest member; remembered per the variables it
depends on; and `keygraph serve` refusing an operation over its limit before anything is
read."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from graphql import FragmentDefinitionNode, get_operation_ast, parse
from graphql.execution import Executor

from keygraph.api import estimate
from keygraph.api.cost import Estimates
from keygraph.execution.operation import build_executor
from keygraph.serve import Served, create_app
from keygraph.tokens import TokenKey, issue
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CODEC, ROOT, Compiled
from tests.keygraph.api.serving import unreported

Compile = Callable[[Path], Compiled]


def page(field: str, inner: str) -> str:
    """A connection field selecting `inner` of each node."""
    return f"{field} {{ edges {{ node {{ {inner} }} }} }}"


def query(*fields: str, head: str = "") -> str:
    """A selection of `fields` (an operation's, with `head`)."""
    return f"{head}{{ {' '.join(fields)} }}"


ORDERS = "user " + query(page("orders(first: 100)", "orderId"))
DEEP = query(page("users(first: 100)", page("orders(first: 100)", ORDERS)))
UNION = "... on User " + query(page("orders(first: 10)", "orderId")) + " ... on Address { city }"
FRAGMENT = " fragment F on User " + query(page("orders(first: 3)", "orderId"))
SKIPPED = "orders @skip(if: $no) { edges { cursor } }"
NODE = 'node(id: "x") { ... on User ' + query(page("orders(first: 7)", "orderId")) + " }"
COSTS = [
    (query(page("users", "name")), None, 20),  # the default page
    (query(page("users(first: 1000)", "name")), None, 100),  # at most the max
    (query(page("users(first: 5)", page("orders", "user { name }"))), None, 5 * 41),
    (query(page("users(first: 2)", page("groups", "name"))), None, 2 * (1 + 20)),
    (query(page("a: users(first: 2)", "id"), page("b: users(first: 3)", "id")), None, 5),
    ("{ users(first: 2) { a: edges { node { id } } b: edges { node { id } } } }", None, 4),
    (query(page("users(first: 2)", "...F")) + FRAGMENT, None, 2 * 4),
    (query(page("users(first: 2)", SKIPPED), head="query($no: Boolean!) "), {"no": True}, 2),
    ('{ user(id: "VXNlcjph") { groups(first: 100) { edges { node { name } } } } }', None, 1 + 100),
    (query(page('userWithAddresses(userId: "u")', UNION)), None, 21 * 11),
    (query(NODE), None, 1 + 7),
    ('{ user(id: "VXNlcjp1") { userId } }', None, 1),
    (DEEP, None, 100 * (1 + 100 * (1 + 1 + 100))),
]


@pytest.fixture
def repo(compiled: Compile) -> Compiled:
    return compiled(ROOT / "access_patterns.toml")


@pytest.mark.parametrize(("document", "variables", "cost"), COSTS)
def test_the_cost_is_the_most_items_an_answer_holds(
    repo: Compiled, document: str, variables: dict[str, Any] | None, cost: int
) -> None:
    parsed = parse(document)
    operation = get_operation_ast(parsed)
    assert operation is not None
    fragments = {
        d.name.value: d for d in parsed.definitions if isinstance(d, FragmentDefinitionNode)
    }
    assert estimate(repo.schema, operation, fragments, variables) == cost


SECRET = "cost-test-secret-" + "s" * 32


async def test_serve_refuses_an_operation_over_its_cost(
    repo: Compiled, store_factory: StoreFactory
) -> None:
    store = await store_factory("embedded", repo.table)
    # DEEP is 11 levels deep: past the depth limit, which would refuse it first
    served = Served(repo.schema, store, TokenKey(SECRET), CODEC, max_depth=11)
    transport = httpx.ASGITransport(app=create_app(served))
    token = issue(SECRET, "acme", "u1", roles=["admin"])
    headers = {"authorization": f"Bearer {token}"}
    async with httpx.AsyncClient(transport=transport, base_url="http://serve.test") as client:
        deep = await client.post("/graphql", json={"query": DEEP}, headers=headers)
        assert deep.status_code == 400
        (error,) = deep.json()["errors"]
        cost = 100 * (1 + 100 * 102)
        assert error["extensions"] == {"code": "QUERY_TOO_COMPLEX", "cost": cost, "limit": 25_000}
        assert error["message"] == f"the operation may return {cost} objects, at most 25000"
        assert deep.json()["extensions"]["cost"]["requested"] == cost
        assert deep.json()["extensions"]["cost"]["actual"]["storeCalls"] == 0
        normal = DEEP.replace("100", "20")  # 20 * (1 + 20 * 22): 8,820
        fine = await client.post("/graphql", json={"query": normal}, headers=headers)
        assert fine.status_code == 200
        assert unreported(fine.json()) == {"data": {"users": {"edges": []}}}
        report = fine.json()["extensions"]["cost"]
        assert (report["requested"], report["limit"]) == (8_820, 25_000)
        assert report["actual"]["objects"] == 0
        assert report["actual"]["storeCalls"] == 1
        assert "budget" not in report  # this app has none


VARIED = (
    "query($first: Int, $no: Boolean!, $id: ID!) { user(id: $id) { userId }"
    " users(first: $first) { edges { node { name "
    + page("orders(first: 3) @skip(if: $no)", "orderId")
    + " } } } }"
)


ASKED: list[tuple[dict[str, Any], int]] = [
    ({"first": 5, "no": True, "id": "a"}, 1 + 5),
    ({"first": 5, "no": True, "id": "b"}, 1 + 5),
    ({"first": 7, "no": True, "id": "a"}, 1 + 7),
    ({"first": 5, "no": False, "id": "a"}, 1 + 5 * (1 + 3)),
    ({"first": None, "no": True, "id": "a"}, 1 + 20),
    ({"no": True, "id": "a"}, 1 + 20),
    ({"first": 5, "no": True, "id": "c"}, 1 + 5),
]
"""Variables one cache is asked with in turn, and the cost of each."""


def test_a_remembered_cost_follows_the_variables_it_depends_on(repo: Compiled) -> None:
    """Ids share an estimate; `first` and `if` do not."""
    document = parse(VARIED)
    estimates = Estimates()
    for variables, cost in ASKED:
        built = build_executor(Executor, repo.schema, document, None, variables)
        assert built is not None
        found = estimates.estimate(
            repo.schema, document, built.operation, built.fragments, built.variable_values
        )
        assert found is not None
        assert found.cost == cost == estimate(repo.schema, built.operation, {}, variables)


def test_a_remembered_cost_follows_how_many_keys_a_batch_get_is_given(compiled: Compile) -> None:
    api = compiled(ROOT / "tests/codegen/cases/authorization/spec.toml")
    document = parse("query($keys: [NoteKey!]!) { getNotes(keys: $keys) { noteId } }")
    estimates = Estimates()
    key = {"userId": "u", "noteId": "n"}
    for keys in ([key], [key, key, key], [key], [key] * 40):
        built = build_executor(Executor, api.schema, document, None, {"keys": keys})
        assert built is not None
        found = estimates.estimate(
            api.schema, document, built.operation, built.fragments, built.variable_values
        )
        assert found is not None
        assert found.cost == len(keys)

"""Query cost: the static estimate, its limit, `extensions.cost` on every response, and the
objects a response actually holds."""

from __future__ import annotations

import gc
import sys
from types import FrameType
from typing import Any

import pytest
from graphql import (
    FragmentDefinitionNode,
    OperationDefinitionNode,
    parse,
)

from bench import queries as bench_queries
from bench.limits import ATTACK, readme_query
from keygraph.api.shape import count_objects
from server.api import build_schema
from server.edge.response import GRAPHQL_RESPONSE
from server.graphql.cost import WRITE_COST, estimate
from server.graphql.prepare import prepare
from server.settings import Limits
from tests.server.conftest import Api

SCHEMA = build_schema(Limits())._schema


def cost(query: str, variables: dict[str, Any] | None = None) -> int:
    document = parse(query)
    operation = next(d for d in document.definitions if isinstance(d, OperationDefinitionNode))
    fragments = {
        d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
    }
    found = estimate(SCHEMA, operation, fragments, variables)
    assert found is not None
    return found.cost


def test_connections_count_their_nodes_and_lists_multiply() -> None:
    assert cost("{ users(first: 7) { edges { node { id } } } }") == 7
    assert cost("{ users { pageInfo { hasNextPage } } }") == 20  # the default page
    assert cost(ATTACK) == 100 + 100 * 100 + 100 * 100 * 100
    nested = "{ users(first: 3) { edges { node { orders(first: 2) { edges { node { id } } } } } } }"
    assert cost(nested) == 3 * (1 + 2)
    assert cost("{ orgRoots { name } }") == 100  # a list without first counts at its bound
    assert cost("{ orgRoots(first: 4) { children(first: 2) { id } } }") == 4 * (1 + 2)
    assert cost('{ order(id: "x") { items { sku } } }') == 1 + 50
    near = "{ shopsNear(lat: 1, lng: 2, radiusKm: 3) { shop { id } } }"
    assert cost(near) == 20 * 2  # each ShopDistance and its shop


def test_aliases_count_each_and_merged_fields_once() -> None:
    one = "users(first: 10) { edges { node { id } } }"
    assert cost(f"{{ a: {one} b: {one} c: {one} }}") == 30
    assert cost(f"{{ {one} {one} }}") == 10  # one response key: the executor runs it once
    edges_twice = "{ users(first: 10) { edges { node { id } } e: edges { node { name } } } }"
    assert cost(edges_twice) == 20


def test_fragments_directives_and_variables_count_as_executed() -> None:
    query = """
    query($n: Int, $skip: Boolean!) {
      users(first: $n) { edges { node { ...F } } }
      more: users(first: 5) @skip(if: $skip) { edges { node { id } } }
    }
    fragment F on User { orders(first: 3) { edges { node { id } } } }
    """
    assert cost(query, {"n": 4, "skip": True}) == 4 * (1 + 3)
    assert cost(query, {"n": 4, "skip": False}) == 4 * (1 + 3) + 5
    assert cost(query, {"skip": True}) == 20 * (1 + 3)  # $n left out: the default page


def test_an_abstract_field_costs_its_costliest_type() -> None:
    query = """{ node(id: "x") {
      ... on User { orders(first: 10) { edges { node { id } } } }
      ... on Group { members(first: 50) { edges { node { id } } } }
    } }"""
    assert cost(query) == 1 + 50


def test_mutations_cost_a_write_and_what_they_return() -> None:
    query = 'mutation { createGroup(input: {name: "g"}) { id members { edges { node { id } } } } }'
    assert cost(query) == WRITE_COST + 1 + 20


def test_introspection_is_free() -> None:
    assert cost("{ __schema { types { name fields { name } } } }") == 0


def test_the_default_limit_admits_the_readme_and_bench_and_refuses_the_attack() -> None:
    limit = Limits().max_cost
    assert cost(readme_query()) <= limit
    variables = {"id": "x", "lat": 1.0, "lng": 2.0, "input": None}
    for name in ("Q1", "Q2", "Q3", "Q4", "Q5", "Q6"):
        assert cost(getattr(bench_queries, name), variables) <= limit, name
    assert cost(ATTACK) > limit


def _calls_to_estimate(query: str) -> int:
    """The Python function calls one estimate of `query` makes (its time: bench/limits.py)."""
    document = parse(query)
    operation = next(d for d in document.definitions if isinstance(d, OperationDefinitionNode))
    calls = 0

    def count(_frame: FrameType, event: str, _arg: object) -> None:
        nonlocal calls
        calls += event == "call"

    gc.disable()  # a collection would run finalizers inside the count
    sys.setprofile(count)
    try:
        estimate(SCHEMA, operation, {}, None)
    finally:
        sys.setprofile(None)
        gc.enable()
    return calls


def test_estimating_walks_the_document_not_the_response() -> None:
    """The attack's million objects cost no more work to estimate than the same selection
    asking for two of each: the estimate multiplies, it never expands."""
    one_each = ATTACK.replace("first:100", "first:1")
    assert cost(one_each) == 3
    fewer = ATTACK.replace("first:100", "first:2")  # the same paths as the attack's
    cold = _calls_to_estimate(ATTACK), _calls_to_estimate(fewer)  # caches filled
    assert _calls_to_estimate(ATTACK) == _calls_to_estimate(fewer) <= max(cold)


def test_counting_objects_follows_the_shape() -> None:
    orders = "orders(first: 2) { edges { node { id } } }"
    query = f"{{ users(first: 5) {{ edges {{ node {{ id {orders} }} }} }} }}"
    document = parse(query)
    found = estimate(SCHEMA, document.definitions[0], {}, None)  # type: ignore[arg-type]
    assert found is not None
    data = {
        "users": {
            "edges": [
                {"node": {"id": "1", "orders": {"edges": [{"node": {"id": "o"}}]}}},
                {"node": {"id": "2", "orders": {"edges": []}}},
            ]
        }
    }
    assert count_objects(data, found.shape) == 3
    assert count_objects(None, found.shape) == 0


async def _refused(api: Api, query: str) -> dict[str, Any]:
    """The body of a request refused before it runs, asked as GraphQL over HTTP's media type
    (both servers then answer 400)."""
    headers = {"Authorization": f"Bearer {api.token}", "Accept": GRAPHQL_RESPONSE}
    response = await api.client.post("/graphql", json={"query": query}, headers=headers)
    assert response.status_code == 400, response.text
    body: dict[str, Any] = response.json()
    return body


async def test_an_operation_over_the_limit_runs_nothing(acme: Api) -> None:
    body = await _refused(acme, ATTACK)
    assert [e["extensions"]["code"] for e in body["errors"]] == ["QUERY_TOO_COMPLEX"]
    assert body["errors"][0]["extensions"]["cost"] == 1_010_100
    assert body["errors"][0]["extensions"]["limit"] == Limits().max_cost
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
    assert report["budget"]["capacity"] == Limits().tenant_budget
    assert 0 < report["budget"]["remaining"] <= Limits().tenant_budget
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


def test_a_prepared_query_remembers_its_estimate_per_cost_variable() -> None:
    query = """query($n: Int, $id: ID!, $more: Boolean!) { user(id: $id) {
      orders(first: $n) { edges { node { id } } } groups @include(if: $more) { edges {
      node { id } } } } }"""
    prepared = prepare(SCHEMA, query, (), Limits())
    operation = next(
        d for d in prepared.document.definitions if isinstance(d, OperationDefinitionNode)
    )

    def run(**variables: Any) -> Any:
        return prepared.estimate(SCHEMA, operation, None, variables)

    first = run(n=5, id="a", more=False)
    assert first.cost == 1 + 5
    assert run(n=5, id="b", more=False) is first  # another id: the same cost, not redone
    assert run(n=7, id="a", more=False).cost == 1 + 7
    assert run(n=5, id="a", more=True).cost == 1 + 5 + 20
    assert run(n="five", id="a", more=False) is None  # does not coerce: nothing remembered
    assert run(n=5, id="a", more=False) is first

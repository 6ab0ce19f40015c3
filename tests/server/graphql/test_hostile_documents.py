"""Small documents that expand to a huge one: fragments spreading others twice or many times,
through inline fragments and aliases, deep nesting, and fields repeated under one response
key. Each is refused before validation or answered as its expansion is, and every walk over
it takes each fragment once (counted, not timed)."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import FragmentDefinitionNode, OperationDefinitionNode, parse
from graphql.execution import values as coercion
from graphql.execution.collect_fields import FragmentDetails
from graphql.execution.values import VariableValues

from generated.queries.user_order import USER_ORDERS_PAGE
from keygraph.api.cost import estimate
from keygraph.execution.plan import Compiler, Object
from keygraph.serve.document_size import Sizes, check_size, same_key_pairs
from keygraph.serve.limits import MAX_PAIRS, MAX_VARIABLE_VALUES
from tests.api_schema import LIMITS, SCHEMA
from tests.server.conftest import Api


def doubling(levels: int, copies: int = 2, body: str = "id", last: str = "id") -> str:
    """`user(id: $u) { ...F0 }` where each fragment Fi selects `body` and spreads F(i+1)
    `copies` times: `copies ** levels` expansions of the last one."""
    spreads = " ".join(["...F{}"] * copies)
    fragments = [
        f"fragment F{i} on User {{ {body} {spreads.format(*[i + 1] * copies)} }}"
        for i in range(levels)
    ]
    fragments.append(f"fragment F{levels} on User {{ {last} }}")
    return "query($u: ID!) { user(id: $u) { ...F0 } }\n" + "\n".join(fragments)


async def _refused(api: Api, query: str, variables: dict[str, Any] | None = None) -> str:
    """The message of the one QUERY_TOO_COMPLEX error the document gets; nothing ran."""
    errors = await api.refused(query, variables)
    assert [e["extensions"]["code"] for e in errors] == ["QUERY_TOO_COMPLEX"], errors
    message: str = errors[0]["message"]
    return message


async def test_fragments_doubling_over_22_levels_are_refused(acme: Api) -> None:
    user = await acme.create_user("ada@example.com")
    query = doubling(22)
    assert len(query) < 1000
    message = await _refused(acme, query, {"u": user["id"]})
    assert message.startswith(f"the query selects {2**23} fields")


async def test_a_fragment_spread_many_times_at_each_level_is_refused(acme: Api) -> None:
    user = await acme.create_user("ada@example.com")
    message = await _refused(acme, doubling(6, copies=8), {"u": user["id"]})
    assert message.startswith(f"the query selects {1 + sum(8**i for i in range(7))} fields")


async def test_doubling_through_inline_fragments_and_aliases_is_refused(acme: Api) -> None:
    user = await acme.create_user("ada@example.com")
    fragments = "\n".join(
        f"fragment F{i} on User {{ ... on User {{ a: id ...F{i + 1} }} b: name ...F{i + 1} }}"
        for i in range(20)
    )
    query = (
        "query($u: ID!) { user(id: $u) { ...F0 } }\n" + fragments + "\nfragment F20 on User { id }"
    )
    errors = await acme.refused(query, {"u": user["id"]})
    assert [e["extensions"]["code"] for e in errors] == ["QUERY_TOO_COMPLEX"] * 2
    aliases, fields = (e["message"] for e in errors)
    assert aliases.startswith(f"the query uses {2**21 - 2} aliases")
    assert fields.startswith(f"the query selects {3 * 2**20 - 1} fields")


async def test_repeated_spreads_within_the_limits_answer_as_one(acme: Api) -> None:
    user = await acme.create_user("ada@example.com")
    query = doubling(8, last="id name addresses { label }")
    data = await acme.data(query, {"u": user["id"]})
    assert data == {"user": {"id": user["id"], "name": "Someone", "addresses": []}}


async def test_deeply_nested_inline_fragments_answer(acme: Api) -> None:
    user = await acme.create_user("ada@example.com")
    query = "query($u: ID!) { user(id: $u) { " + "... on User { " * 150 + "id" + " }" * 152
    assert await acme.data(query, {"u": user["id"]}) == {"user": {"id": user["id"]}}


async def test_fragment_cycles_are_validation_errors(acme: Api) -> None:
    query = """query($u: ID!) { user(id: $u) { ...A } }
    fragment A on User { id ...B } fragment B on User { name ...A }"""
    errors = await acme.refused(query, {"u": "x"})
    assert {e["extensions"]["code"] for e in errors} == {"GRAPHQL_VALIDATION_FAILED"}


@pytest.mark.parametrize(
    "query",
    [
        "{ " + " ".join(f'node(id: "{i}") {{ id }}' for i in range(80)) + " }",
        "{ "
        + " ".join(f"...A{i}" for i in range(80))
        + " }\n"
        + "\n".join(f'fragment A{i} on Query {{ node(id: "{i}") {{ id }} }}' for i in range(80)),
        "{ " + " ".join(["viewer { tenant }"] * 80) + " }",
    ],
    ids=["fields", "fragments", "same-fields"],
)
async def test_one_response_key_selected_in_thousands_of_pairs_is_refused(
    acme: Api, query: str
) -> None:
    message = await _refused(acme, query)
    assert message.startswith(f"the query selects {2 * 80 * 79 // 2} pairs of fields")


async def test_one_response_key_within_the_pairs_limit_answers(acme: Api) -> None:
    assert MAX_PAIRS >= 2 * 30 * 29 // 2
    data = await acme.data("{ " + " ".join(["viewer { tenant }"] * 30) + " }")
    assert data == {"viewer": {"tenant": "acme"}}


async def test_variables_holding_too_many_values_are_refused_uncoerced(
    acme: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    user = await acme.create_user("ada@example.com")
    coerced = []
    monkeypatch.setattr(coercion, "coerce_input_value", lambda *a, **k: coerced.append(a))
    item = {"sku": "s", "name": "n", "quantity": 1, "unitPriceCents": 1}
    variables = {"i": {"userId": user["id"], "currency": "EUR", "items": [item] * 1000}}
    query = "mutation($i: CreateOrderInput!) { createOrder(input: $i) { id } }"
    message = await _refused(acme, query, variables)
    assert message == f"the variables hold more than {MAX_VARIABLE_VALUES} values"
    assert coerced == []


class CountingFragments(dict[str, FragmentDefinitionNode]):
    """A document's fragments, counting each lookup of one."""

    def __init__(self, query: str) -> None:
        document = parse(query)
        super().__init__(
            (d.name.value, d) for d in document.definitions if isinstance(d, FragmentDefinitionNode)
        )
        operation = next(d for d in document.definitions if isinstance(d, OperationDefinitionNode))
        self.operation = operation
        self.lookups = 0

    def __getitem__(self, name: str) -> FragmentDefinitionNode:
        self.lookups += 1
        return super().__getitem__(name)

    def get(self, name: str, default: Any = None) -> Any:
        self.lookups += 1
        return super().get(name, default)


def test_sizes_take_each_fragment_once() -> None:
    fragments = CountingFragments(doubling(150, copies=3))
    size = Sizes(fragments).measure(fragments.operation.selection_set)
    assert size.fields == 1 + sum(3**i for i in range(151))
    assert fragments.lookups <= 2 * 151
    fragments.lookups = 0
    assert same_key_pairs(fragments.operation.selection_set, fragments) == 150 * 151 // 2
    assert fragments.lookups == 151


def test_the_cost_and_the_plan_take_repeated_spreads_once() -> None:
    fragments = CountingFragments(doubling(60, last="id orders { edges { node { id } } }"))
    assert (
        estimate(SCHEMA, fragments.operation, fragments, {"u": "x"}) == 1 + USER_ORDERS_PAGE.default
    )
    details = {name: FragmentDetails(definition) for name, definition in fragments.items()}
    plan = Compiler(SCHEMA, details, VariableValues({}, {}), fragments.operation).compile()
    (user,) = plan.root.fields
    assert isinstance(user.completion, Object)
    assert [field.key for field in user.completion.plan.fields] == ["id", "orders"]


def test_a_fragment_chain_longer_than_the_stack_is_measured() -> None:
    chain = "\n".join(f"fragment F{i} on User {{ ...F{i + 1} }}" for i in range(5000))
    document = parse("{ viewer { tenant } }\n" + chain + "\nfragment F5000 on User { id }")
    assert check_size(document, LIMITS) == []


async def test_operations_over_the_cost_limit_are_never_planned(
    acme: Api, monkeypatch: pytest.MonkeyPatch
) -> None:
    planned: list[Compiler] = []
    compile_plan = Compiler.compile

    def counted(self: Compiler) -> Any:
        planned.append(self)
        return compile_plan(self)

    monkeypatch.setattr(Compiler, "compile", counted)
    user = await acme.create_user("ada@example.com")
    assert await acme.data("query($u: ID!) { user(id: $u) { id } }", {"u": user["id"]})
    assert planned
    planned.clear()
    over = "{ users(first: 100) { edges { node { groups(first: 100) { edges { node {"
    over += " members(first: 100) { edges { node { id } } } } } } } } } }"
    message = await _refused(acme, over)
    assert message.startswith("the operation may return")
    assert planned == []

"""What the compiler covers: every operation of the corpus, the benchmark and the docs is
compiled (none falls back to graphql-core), plans are kept per operation and per value of
its @skip/@include variables, a subscription's plan is that of its events, and
introspection is left to graphql-core."""

from __future__ import annotations

from typing import Any

from graphql import parse

from bench.queries import M1, Q1, Q2, Q3, Q4, Q5, Q6
from keygraph.execution.plan import Object, ObjectPlan, OperationPlan
from server.api import build_schema
from server.graphql.compiled.executor import CompiledExecutor
from server.settings import Limits
from tests.server.graphql.compiled.corpus import MUTATIONS, QUERIES, Seeded
from tests.server.graphql.compiled.test_agree import _docs_queries

SCHEMA = build_schema(Limits())._schema
IDS = Seeded(
    users=["VXNlcjox"] * 8,
    emails=["a@example.org"] * 8,
    orders=["T3JkZXI6MQ"] * 3,
    groups=["R3JvdXA6MQ"],
    org_nodes=["T3JnTm9kZTox"],
    shops=["U2hvcDox"] * 2,
    addresses=["QWRkcmVzczoxLjI"],
)


def _executor(query: str, variables: dict[str, Any] | None = None) -> CompiledExecutor:
    built = CompiledExecutor.build(SCHEMA, parse(query), raw_variable_values=variables or {})
    assert isinstance(built, CompiledExecutor), built
    return built


def test_every_operation_of_the_corpus_compiles() -> None:
    operations = [case(IDS) for case in (*QUERIES, *MUTATIONS)]
    operations += [(query, {}) for query in _docs_queries()]
    operations += [(query, {"id": "VXNlcjox", "lat": 1.0, "lng": 2.0}) for query in (Q1, Q2, Q4)]
    operations += [(Q3, {}), (Q5, {"id": "T3JnTm9kZTox"}), (Q6, {"lat": 1.0, "lng": 2.0})]
    operations.append((M1, {"input": {"userId": "VXNlcjox", "currency": "EUR", "items": []}}))
    for query, variables in operations:
        if "query Named" in query:
            continue  # two operations and no name given: graphql-core reports it
        assert isinstance(_executor(query, variables).plan(), OperationPlan), query


def test_a_plan_is_kept_per_value_of_the_directive_variables() -> None:
    document = parse(
        "query($more: Boolean!, $id: ID!) { user(id: $id) { id name @include(if: $more) } }"
    )
    plans = []
    for more, user in ((True, "VXNlcjox"), (True, "VXNlcjoy"), (False, "VXNlcjox")):
        built = CompiledExecutor.build(
            SCHEMA, document, raw_variable_values={"more": more, "id": user}
        )
        assert isinstance(built, CompiledExecutor)
        plans.append(built.plan())
    assert plans[0] is plans[1]  # ids do not change the plan
    assert plans[0] is not plans[2]
    user_fields = [
        [field.key for field in plan.root.fields[0].completion.plan.fields]  # type: ignore[union-attr]
        for plan in plans
        if plan is not None
    ]
    assert user_fields == [["id", "name"], ["id", "name"], ["id"]]


def test_introspection_is_left_to_graphql_core() -> None:
    assert _executor("{ __schema { types { name } } }").plan() is None
    assert _executor('{ viewer { tenant } __type(name: "User") { name } }').plan() is None
    assert _executor("{ viewer { tenant __typename } }").plan() is not None


def test_scalar_and_enum_arguments_pass_on_by_name_and_inputs_convert() -> None:
    query = (
        'query($id: ID!) { user(id: $id) { orders(first: 2, from: "2026-01-01T00:00:00Z")'
        " { edges { cursor } } } ordersByStatus(status: PAID) { edges { cursor } } }"
    )
    plan = _executor(query, {"id": "VXNlcjox"}).plan()
    assert plan is not None
    user, by_status = plan.root.fields
    assert (user.binding.plain, user.literal_arguments) == ({"id": "id"}, False)
    orders = user.completion.plan.fields[0]  # type: ignore[union-attr]
    assert orders.binding.plain == {
        "first": "first",
        "after": "after",
        "from": "from_",
        "to": "to",
    }
    assert orders.literal_arguments
    assert by_status.binding.plain is not None
    assert by_status.binding.plain["status"] == "status"
    create = _executor('mutation { createUser(input: {email: "a@b.c", name: "A"}) { id } }').plan()
    assert create is not None
    assert create.root.fields[0].binding.plain is None  # an input object: Strawberry's


def test_a_subscription_compiles_for_its_events_whose_root_value_is_the_event() -> None:
    query = """subscription($id: ID!, $email: Boolean!) {
      changed: userChanged(id: $id) { change user { name email @include(if: $email) } }
    }"""
    plan = _executor(query, {"id": "VXNlcjox", "email": True}).plan()
    assert plan is not None
    (root,) = plan.root.fields
    assert root.key == "changed"
    assert root.resolver is not None
    event = object()
    assert root.resolver(event) is event  # the root field's value is the event
    user = next(f for f in root.completion.inner.plan.fields if f.key == "user")  # type: ignore[union-attr]
    assert [f.key for f in user.completion.inner.plan.fields] == ["name", "email"]  # type: ignore[union-attr]


def _below(plan: ObjectPlan, key: str) -> ObjectPlan:
    """The plan of the object (or of each object of the list) at `key` of `plan`."""
    completion: Any = next(field for field in plan.fields if field.key == key).completion
    while not isinstance(completion, Object):
        completion = completion.inner
    return completion.plan


def test_a_resolver_field_with_an_answer_attribute_fills_with_its_object() -> None:
    plan = _executor(Q4, {"id": "R3JvdXA6MQ"}).plan()
    assert plan is not None
    node = _below(_below(_below(_below(plan.root, "group"), "members"), "edges"), "node")
    email = next(field for field in node.fields if field.key == "email")
    assert email.resolver is not None
    assert email.answer_attribute == "email_answer"
    assert node.whole is not None  # id, name and email: one fill call a member
    orders = _executor(Q2, {"id": "VXNlcjox"}).plan()
    assert orders is not None
    order = _below(_below(_below(orders.root, "user"), "orders"), "edges")
    assert all(field.answer_attribute is None for field in order.fields)  # no metadata

"""The API of a generated package, executed over each store: for this repository's spec and
every valid golden case, every pattern answers as a root field; pages cover every item once
and another tenant sees none of them; `node` refetches what it names; a field's own read
rule answers null with FORBIDDEN, and a pattern's rule refuses before any read."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from graphql import (
    GraphQLEnumType,
    GraphQLField,
    GraphQLInputObjectType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLSchema,
    GraphQLType,
    build_schema,
    get_named_type,
)

from keygraph.api import Api, executable
from keygraph.api.ids import global_id
from keygraph.caller import Caller
from keygraph.plan import Put
from server.seed.tenant import SeedSizes, seed
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CASES, ROOT, Compiled, ask

CASE_SPECS = (case / "spec.toml" for case in CASES.iterdir() if (case / "expected/api.py").exists())
SPECS = [ROOT / "access_patterns.toml", *sorted(CASE_SPECS)]
Compile = Callable[[Path], Compiled]


def _sample(kind: GraphQLType) -> Any:
    """A value of an argument's type that any key can hold."""
    if isinstance(kind, GraphQLNonNull):
        return _sample(kind.of_type)
    if isinstance(kind, GraphQLList):
        return [_sample(kind.of_type)]
    named = get_named_type(kind)
    if isinstance(named, GraphQLInputObjectType):
        return {name: _sample(field.type) for name, field in named.fields.items()}
    if isinstance(named, GraphQLEnumType):
        return next(iter(named.values))
    return {
        "DateTime": "2026-01-02T03:04:05+00:00",
        "Date": "2026-01-02",
        "Int": 7,
        "Long": 7,
    }.get(named.name, "x1")


def _selection(field: GraphQLField) -> str:
    named = get_named_type(field.type)
    if named.name.endswith("Connection"):
        return "{ edges { cursor node { __typename } } pageInfo { hasNextPage endCursor } }"
    return "{ __typename }"


def _operation(name: str, field: GraphQLField) -> tuple[str, dict[str, Any]]:
    given = {arg: _sample(value.type) for arg, value in field.args.items()}
    if list(field.args) == ["id"]:  # a get by global id: one of the type it answers
        given["id"] = global_id(get_named_type(field.type).name, ["x1"])
    given.pop("after", None)
    given["first"] = 5 if "first" in field.args else given.get("first")
    given = {arg: value for arg, value in given.items() if value is not None}
    declared = ", ".join(f"${arg}: {field.args[arg].type}" for arg in given)
    passed = ", ".join(f"{arg}: ${arg}" for arg in given)
    head = f"query Q({declared})" if declared else "query Q"
    call = f"{name}({passed})" if passed else name
    return f"{head} {{ {call} {_selection(field)} }}", given


@pytest.mark.parametrize("spec", SPECS, ids=lambda p: p.parent.name)
async def test_every_pattern_answers_as_a_root_field(
    spec: Path, kind: str, store_factory: StoreFactory, compiled: Compile
) -> None:
    package = compiled(spec)
    store = await store_factory(kind, package.table)
    query = package.schema.query_type
    assert query is not None
    for name, field in query.fields.items():
        if name == "node":
            continue
        document, variables = _operation(name, field)
        answer = await ask(package.schema, store, "acme", document, variables)
        assert "errors" not in answer, (name, answer)
        assert name in answer["data"]


SIZES = SeedSizes(users=7, orders=6, groups=2, org_nodes=4, org_depth=2, shops=3, max_members=3)
PAGE = """query($after: String) { users(first: 2, after: $after) {
  edges { cursor node { id userId name } } pageInfo { hasNextPage endCursor startCursor } } }"""


async def _all_users(schema: GraphQLSchema, store: Any, tenant: str) -> list[dict[str, Any]]:
    found: list[dict[str, Any]] = []
    after = None
    while True:
        answer = await ask(schema, store, tenant, PAGE, {"after": after})
        assert "errors" not in answer, answer
        page = answer["data"]["users"]
        found += [edge["node"] for edge in page["edges"]]
        if page["edges"]:
            assert page["pageInfo"]["startCursor"] == page["edges"][0]["cursor"]
        if not page["pageInfo"]["hasNextPage"]:
            return found
        after = page["pageInfo"]["endCursor"]


async def test_pages_hold_every_item_once_and_no_other_tenants(
    kind: str, store_factory: StoreFactory, compiled: Compile
) -> None:
    package = compiled(ROOT / "access_patterns.toml")
    store = await store_factory(kind, package.table)
    await seed(store, "acme", SIZES, progress=False)
    await seed(
        store,
        "globex",
        SeedSizes(users=3, orders=1, groups=1, org_nodes=1, org_depth=1, shops=1, max_members=1),
        progress=False,
    )
    acme = await _all_users(package.schema, store, "acme")
    globex = await _all_users(package.schema, store, "globex")
    assert len(acme) == 7
    assert len({user["userId"] for user in acme}) == 7  # each once
    assert len(globex) == 3
    assert not {u["userId"] for u in acme} & {u["userId"] for u in globex}
    for user in acme[:3]:  # node refetches by global id, only in the id's tenant
        node = "query($id: ID!) { node(id: $id) { id ... on User { userId name } } }"
        here = await ask(package.schema, store, "acme", node, {"id": user["id"]})
        assert here["data"]["node"] == user
        there = await ask(package.schema, store, "globex", node, {"id": user["id"]})
        assert there["data"]["node"] is None


async def test_rules_refuse_fields_and_patterns(
    kind: str, store_factory: StoreFactory, compiled: Compile
) -> None:
    package = compiled(CASES / "authorization" / "spec.toml")
    store = await store_factory(kind, package.table)
    user = package.module("models.user").User(user_id="u1", name="Ann", salary=5000)
    await store.put(Put(user.to_item("acme")))
    read = '{ getUser(userId: "u1") { name salary } }'
    stranger = Caller("u2", frozenset({"member"}))
    answer = await ask(package.schema, store, "acme", read, caller=stranger)
    assert answer["data"] == {"getUser": {"name": "Ann", "salary": None}}
    assert [e["extensions"]["code"] for e in answer["errors"]] == ["FORBIDDEN"]
    assert answer["errors"][0]["path"] == ["getUser", "salary"]
    owner = Caller("u1", frozenset({"member"}))
    answer = await ask(package.schema, store, "acme", read, caller=owner)
    assert answer == {"data": {"getUser": {"name": "Ann", "salary": 5000}}}
    notes = '{ userNotes(userId: "u1") { edges { node { text } } } }'
    answer = await ask(package.schema, store, "acme", notes, caller=stranger)
    assert answer["data"] == {"userNotes": None}  # the refusal nulls its field alone
    assert [e["extensions"]["code"] for e in answer["errors"]] == ["FORBIDDEN"]


def test_a_field_nothing_answers_fails_when_the_schema_is_built() -> None:
    sdl = "type Query { listThings(first: Int): Int }"
    with pytest.raises(ValueError, match="listThings"):
        executable(Api(sdl, {}, {}, {}))
    assert build_schema(sdl).query_type is not None


RANGE = 'query($from: DateTime!, $to: DateTime!) { userOrdersBetween(userId: "u", '
RANGE += "from: $from, to: $to) { edges { cursor } } }"
JANUARY = datetime(2026, 1, 1, tzinfo=UTC).isoformat()
FEBRUARY = datetime(2026, 2, 1, tzinfo=UTC).isoformat()


@pytest.mark.parametrize(
    ("bounds", "why"),
    [
        ((JANUARY, "not a date"), "not an ISO 8601"),
        (("2026-01-01T00:00:00", FEBRUARY), "needs its zone offset"),
        ((FEBRUARY, JANUARY), "sorts after"),  # reversed: refused before any read
    ],
)
async def test_a_range_that_is_no_range_is_bad_user_input(
    bounds: tuple[str, str], why: str, store_factory: StoreFactory, compiled: Compile
) -> None:
    package = compiled(ROOT / "access_patterns.toml")
    store = await store_factory("embedded", package.table)
    variables = {"from": bounds[0], "to": bounds[1]}
    answer = await ask(package.schema, store, "acme", RANGE, variables)
    assert [e["extensions"]["code"] for e in answer["errors"]] == ["BAD_USER_INPUT"]
    assert why in answer["errors"][0]["message"]


async def test_a_pattern_field_names_its_root_field_and_subscription(
    tmp_path: Path, store_factory: StoreFactory, compiled: Compile
) -> None:
    text = (CASES / "social" / "spec.toml").read_text(encoding="utf-8")
    renamed = text.replace(
        '[patterns.posts_by]\noperation = "query"',
        '[patterns.posts_by]\nfield = "postsOf"\noperation = "query"',
    )
    assert renamed != text
    spec = tmp_path / "spec.toml"
    spec.write_text(renamed, encoding="utf-8")
    package = compiled(spec)
    query, subscription = package.schema.query_type, package.schema.subscription_type
    assert query is not None
    assert subscription is not None
    assert {"postsOf", "postsBy"} & set(query.fields) == {"postsOf"}
    assert {"postsOfChanged", "postsByChanged"} & set(subscription.fields) == {"postsOfChanged"}
    store = await store_factory("embedded", package.table)
    read = '{ postsOf(memberId: "m1", first: 2) { edges { node { postId } } } }'
    answer = await ask(package.schema, store, "acme", read)
    assert answer == {"data": {"postsOf": {"edges": []}}}

"""This repository's read API compiled from its spec: the README's first query, sent as it is
to `keygraph serve --package generated --extend server.extension` over a seeded store,
answers the data and refuses the fields the hand-written server did over the same store
(recorded in recorded/readme_query_*.json, tests/keygraph/api/recordings.py); and every field
the hand-written server's Query reached is declared alike in schema.graphql but those
docs/contract.md lists."""

from __future__ import annotations

import gc
import re
import warnings
from collections.abc import Iterator
from dataclasses import replace
from itertools import count
from typing import Any

import httpx
import pytest
from graphql import GraphQLInterfaceType, GraphQLObjectType, GraphQLSchema, get_named_type

from generated import authz
from generated.api import API
from generated.queries.user import list_users
from generated.table import TABLE
from keygraph.api import ApiContext, executable, execute
from keygraph.cursor import CursorCodec
from keygraph.ids import ulid
from keygraph.serve import create_app as serve_app
from keygraph.serve.package import extension_at, served
from keygraph.store import Session, Store
from keygraph.tokens import issue
from server.domain import addresses
from server.seed.tenant import SeedSizes, seed
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CODEC, ROOT
from tests.keygraph.api.recordings import hand_schema, recorded
from tests.keygraph.api.test_relations import Calls

DIFFERENT = {
    ("User", "groups"),
    ("Order", "totalCents"),
}
"""docs/contract.md, "The read API compiled from the spec": each field and why."""
SIZES = SeedSizes(users=5, orders=8, groups=3, org_nodes=9, org_depth=3, shops=40, max_members=3)
EXTENDED = """{ users(first: 5) { edges { node { name addresses { label city isDefault }
  since: orders(first: 3, from: "2025-06-01T00:00:00+00:00") { edges { node { createdAt } } }
  before: orders(to: "2025-06-01T00:00:00+00:00") { edges { node { createdAt } } }
  within: orders(from: "2025-03-01T00:00:00+00:00", to: "2025-09-01T00:00:00+00:00") {
    edges { node { createdAt } } pageInfo { hasNextPage } } } } }
  orgRoots(first: 3) { name parent { name } ancestors { name } children(first: 3) { name
    parent { name } ancestors { name } children(first: 3) { name parent { name }
    ancestors { name } } } } }"""
"""The fields server/extension/ adds to generated types."""
SECRET = "repository-api-secret-" + "r" * 32


def _declared(schema: GraphQLSchema) -> dict[tuple[str, str], str]:
    """Each field `Query` reaches in the schema, by (type, field): its arguments and type."""
    found: dict[tuple[str, str], str] = {}
    seen: set[str] = set()
    names = ["Query"]
    while names:
        name = names.pop()
        kind = schema.type_map[name]
        if name in seen or not isinstance(kind, GraphQLObjectType | GraphQLInterfaceType):
            continue
        seen.add(name)
        for field_name, field in kind.fields.items():
            args = ", ".join(f"{a}: {v.type}" for a, v in field.args.items())
            found[(name, field_name)] = f"({args}) {field.type}"
            names.append(get_named_type(field.type).name)
    return found


def test_schema_graphql_read_fields_are_declared_alike() -> None:
    theirs = _declared(hand_schema())
    extension = extension_at("server.extension", "generated")
    ours = _declared(executable(API, [extension], authz))
    assert len(theirs) == 87
    assert {where for where, shown in theirs.items() if ours.get(where) != shown} == DIFFERENT


def _readme_query() -> str:
    """The README's first query, as a reader copies it into GraphiQL."""
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"## A first query.*?```graphql\n(.*?)```", text, re.S)
    assert found is not None
    return found.group(1)


async def _ask(app: Any, token: str, query: str) -> dict[str, Any]:
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        answer = await client.post(
            "/graphql", json={"query": query}, headers={"authorization": f"Bearer {token}"}
        )
    assert answer.status_code == 200, answer.text
    body: dict[str, Any] = answer.json()
    return body


def _refused(answer: dict[str, Any]) -> set[tuple[str, str]]:
    """Each error's place (its path, indexes as they are) and code."""
    return {
        (".".join(map(str, e.get("path", ()))), e["extensions"]["code"])
        for e in answer.get("errors", ())
    }


def _serving(store: Store) -> Any:
    """The spec's app on `store`, with the extension, its tokens signed with SECRET."""
    extension = extension_at("server.extension", "generated")
    return serve_app(replace(served("generated", store, SECRET, [extension]), max_cost=10**6))


def _address_ids() -> Iterator[str]:
    """New addresses' ids in the order they are made, the same each run (their order in a
    user's list is their ids')."""
    return (ulid(1_750_000_000_000, n) for n in count(1))


@pytest.fixture
async def app(
    kind: str, store_factory: StoreFactory, monkeypatch: pytest.MonkeyPatch
) -> tuple[Any, str]:
    """The spec's app on a seeded store, the first two users with two addresses each; and
    the second user's id (a member reads its own)."""
    store = await store_factory(kind, TABLE)
    await seed(store, "demo", SIZES, progress=False)
    session = Session(store, CursorCodec(b"c" * 32))
    users = await list_users(session, "demo", first=2)
    monkeypatch.setattr(addresses, "new_id", _address_ids().__next__)
    for user in users.items:  # the first a default, the second one more
        for label in ("Home", "Work"):
            fields: dict[str, str | None] = {"label": label, "line1": "1 Main St"}
            fields |= {"city": "Berlin", "postal_code": "10115", "country": "DE", "line2": None}
            await addresses.add_address(session, "demo", user.user_id, fields, make_default=False)
    return _serving(store), users.items[1].user_id


@pytest.mark.parametrize("role", ["admin", "member"])
async def test_the_readme_query_answers_as_the_hand_written_server_did(
    app: tuple[Any, str], role: str
) -> None:
    served_app, subject = app
    token = issue(SECRET, "demo", subject, roles=[role])
    answers = [await _ask(served_app, token, d) for d in (_readme_query(), EXTENDED)]
    found = [{"data": a["data"], "refused": sorted(_refused(a))} for a in answers]
    ours, theirs = recorded(f"readme_query_{role}", found)
    for document, mine, hers in zip(("README", "EXTENDED"), ours, theirs, strict=True):
        assert mine["data"] == hers["data"], document
        assert mine["refused"] == hers["refused"], document
    shown = answers[1]["data"]  # EXTENDED's: addresses, and nodes two levels down
    assert any(edge["node"]["addresses"] for edge in shown["users"]["edges"]) or role == "member"
    if role == "admin":  # the seed's orders run from 2025 into 2026: each range holds some
        for name in ("since", "before", "within"):
            assert any(edge["node"][name]["edges"] for edge in shown["users"]["edges"]), name
    deep = [g for root in shown["orgRoots"] for c in root["children"] for g in c["children"]]
    assert deep
    assert all(len(node["ancestors"]) == 2 and node["parent"] for node in deep)


async def test_the_extension_reads_a_wave_in_one_batch_get(store_factory: StoreFactory) -> None:
    store = await store_factory("embedded", TABLE)
    await seed(store, "demo", SIZES, progress=False)
    schema = executable(API, [extension_at("server.extension", "generated")], authz)
    calls = Calls(store)
    document = """{ orgRoots { children { children { name
      parent { name } ancestors { name } } } } }"""
    answer = await execute(schema, document, ApiContext(Session(calls, CODEC), "demo"))
    assert "errors" not in answer, answer
    deep = [g for r in answer["data"]["orgRoots"] for c in r["children"] for g in c["children"]]
    assert len(deep) > 1
    assert all(node["parent"] == {"name": node["ancestors"][-1]["name"]} for node in deep)
    roots = len(answer["data"]["orgRoots"])
    children = sum(len(r["children"]) for r in answer["data"]["orgRoots"])
    # the roots, each root's children, each child's: then every ancestor in one call
    assert calls.kinds == {"Query": 1 + roots + children, "BatchGetItem": 1}


@pytest.mark.parametrize(
    ("bounds", "code"),
    [
        ('from: "2025-09-01T00:00:00+00:00", to: "2025-03-01T00:00:00+00:00"', "BAD_USER_INPUT"),
        ('from: "0001-01-01T00:00:00+00:00", to: "9999-12-31T23:59:59+00:00"', None),
        ('from: "not a time"', "GRAPHQL_VALIDATION_FAILED"),  # a literal: the document's
        ("from: null, to: null", None),
    ],
)
async def test_a_range_of_orders_refuses_what_no_key_can_hold(
    store_factory: StoreFactory, bounds: str, code: str | None
) -> None:
    store = await store_factory("embedded", TABLE)
    await seed(store, "demo", SIZES, progress=False)
    schema = executable(API)
    document = f"{{ users {{ edges {{ node {{ orders({bounds}) {{ edges {{ cursor }} }} }} }} }} }}"
    answer = await execute(schema, document, ApiContext(Session(store, CODEC), "demo"))
    codes = {error["extensions"]["code"] for error in answer.get("errors", ())}
    assert codes == ({code} if code else set()), answer.get("errors")
    if code is None:
        assert all(edge["node"]["orders"]["edges"] for edge in answer["data"]["users"]["edges"])


async def test_fields_abandoned_below_a_nulled_place_leave_no_coroutine(
    store_factory: StoreFactory,
) -> None:
    store = await store_factory("embedded", TABLE)
    await seed(store, "demo", SIZES, progress=False)
    schema = executable(API, [extension_at("server.extension", "generated")], authz)
    document = "{ orgRoots { children(first: -1) { id } parent { id } ancestors { id } } }"
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        answer = await execute(schema, document, ApiContext(Session(store, CODEC), "demo"))
        gc.collect()
    assert answer["data"] == {"orgRoots": None}  # children is non-null: its refusal nulls
    assert [error["extensions"]["code"] for error in answer["errors"]] == ["BAD_USER_INPUT"]
    assert [str(w.message) for w in caught] == []

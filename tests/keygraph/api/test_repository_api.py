"""This repository's read API compiled from its spec: the README's first query, sent as it is
to `keygraph serve --package generated --extend server.extension` and to the hand-written
server over one seeded store, answers the same data and refuses the same fields; and every
field schema.graphql's Query reaches is declared alike but those docs/contract.md lists."""

from __future__ import annotations

import re
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx
import pytest
from graphql import (
    GraphQLInterfaceType,
    GraphQLObjectType,
    GraphQLSchema,
    build_schema,
    get_named_type,
)

from generated import authz
from generated.api import API
from generated.table import TABLE
from keygraph.api import executable
from keygraph.serve import create_app as serve_app
from keygraph.serve.package import extension_at, served
from keygraph.tokens import issue
from server.auth.tokens import issue_token
from server.edge.app import create_app
from server.seed.tenant import SeedSizes, seed
from server.settings import Settings
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import ROOT

DIFFERENT = {
    ("Group", "members"),
    ("User", "groups"),
    ("OrgNode", "children"),
    ("OrgNode", "descendants"),
    ("Order", "totalCents"),
    ("User", "orders"),
    ("User", "addresses"),
    ("Address", "isDefault"),
    ("OrgNode", "parent"),
    ("OrgNode", "ancestors"),
}
"""docs/contract.md, "The read API compiled from the spec": each field and why."""
SIZES = SeedSizes(users=5, orders=8, groups=3, org_nodes=6, org_depth=2, shops=40, max_members=3)
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
    theirs = _declared(build_schema((ROOT / "schema.graphql").read_text(encoding="utf-8")))
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


@pytest.fixture
async def apps(kind: str, store_factory: StoreFactory, tmp_path: Path) -> tuple[Settings, Any, Any]:
    """The hand-written server's settings and app, and the spec's app, on one seeded store."""
    store = await store_factory(kind, TABLE)
    await seed(store, "demo", SIZES, progress=False)
    settings = Settings(data_dir=tmp_path, jwt_secret=SECRET, env="production").resolved()
    extension = extension_at("server.extension", "generated")
    spec = serve_app(replace(served("generated", store, SECRET, [extension]), max_cost=10**6))
    return settings, create_app(settings, store), spec


@pytest.mark.parametrize("role", ["admin", "member"])
async def test_the_readme_query_answers_alike_from_the_spec(
    apps: tuple[Settings, Any, Any], role: str
) -> None:
    settings, hand, spec = apps
    query = _readme_query()
    listed = "{ users { edges { node { userId } } } }"
    users = await _ask(spec, issue(SECRET, "demo", "x", roles=["admin"]), listed)
    subject = users["data"]["users"]["edges"][1]["node"]["userId"]  # a member reads its own
    theirs = await _ask(hand, issue_token(settings, "demo", subject, roles=[role]), query)
    ours = await _ask(spec, issue(SECRET, "demo", subject, roles=[role]), query)
    assert ours["data"] == theirs["data"]
    assert _refused(ours) == _refused(theirs)
    assert ours["data"]["users"]["edges"]
    assert ours["data"]["orgRoots"]

"""Org trees: roots, children by name, pre-order descendants with paging, ancestors in one
batched read, depth and parent, with the store calls each query costs."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pydantic
import pytest
import strawberry
from strawberry.tools import merge_types
from strawberry.types import ExecutionResult

from generated.runtime.cursor import CursorCodec
from generated.runtime.store import Session
from generated.table import TABLE
from server.context import Context
from server.counting import CountingStore
from server.ids import from_global_id, to_global_id
from server.resolvers import org as org_resolvers
from server.resolvers.org import OrgMutation, OrgQuery
from server.store.embedded import EmbeddedStore
from server.types import org as org_types
from server.types.node import node_resolver

SCHEMA = strawberry.Schema(
    query=merge_types("Query", (OrgQuery,)), mutation=merge_types("Mutation", (OrgMutation,))
)
CODEC = CursorCodec(b"org-tests-cursor-secret-0123456789")

CREATE = """mutation($name: String!, $parent: ID) {
  createOrgNode(input: {name: $name, parentId: $parent}) { id name depth }
}"""


class Org:
    """Runs GraphQL against the org fields as one tenant, counting each request's calls."""

    def __init__(self, store: EmbeddedStore, tenant: str) -> None:
        self.store = store
        self.tenant = tenant
        self.calls = 0
        self.waves = 0

    def context(self) -> tuple[Context, CountingStore]:
        counting = CountingStore(self.store)
        ctx = Context(self.tenant, "tester", Session(counting, CODEC), "test-request")
        return ctx, counting

    async def execute(self, query: str, **variables: Any) -> ExecutionResult:
        ctx, counting = self.context()
        result = await SCHEMA.execute(query, variable_values=variables, context_value=ctx)
        self.calls, self.waves = counting.calls, counting.waves
        return result

    async def run(self, query: str, **variables: Any) -> tuple[dict[str, Any] | None, list[str]]:
        result = await self.execute(query, **variables)
        codes = [str((error.extensions or {}).get("code")) for error in result.errors or []]
        return result.data, codes

    async def data(self, query: str, **variables: Any) -> dict[str, Any]:
        data, codes = await self.run(query, **variables)
        assert not codes, codes
        assert data is not None
        return data

    async def create(self, name: str, parent: str | None = None) -> str:
        data = await self.data(CREATE, name=name, parent=parent)
        node_id: str = data["createOrgNode"]["id"]
        return node_id


@pytest.fixture
async def store(tmp_path: Path) -> AsyncIterator[EmbeddedStore]:
    embedded = EmbeddedStore(tmp_path / "org.sqlite3", TABLE)
    yield embedded
    await embedded.close()


@pytest.fixture
def acme(store: EmbeddedStore) -> Org:
    return Org(store, "acme")


@pytest.fixture
def globex(store: EmbeddedStore) -> Org:
    return Org(store, "globex")


def path_of(global_id: str) -> tuple[str, ...]:
    type_name, local = from_global_id(global_id)
    assert type_name == "OrgNode"
    return tuple(local.split("."))


def node_key(global_id: str) -> str:
    return path_of(global_id)[-1]


async def test_roots_come_by_name_then_id(acme: Org) -> None:
    created = [(name, await acme.create(name)) for name in ("Beta", "Alpha", "Gamma", "Alpha")]
    data = await acme.data("{ orgRoots { id name depth parent { id } } }")
    expected = sorted(created, key=lambda pair: (pair[0], node_key(pair[1])))
    assert [(root["name"], root["id"]) for root in data["orgRoots"]] == expected
    assert {root["depth"] for root in data["orgRoots"]} == {0}
    assert all(root["parent"] is None for root in data["orgRoots"])
    assert acme.calls == 1


async def test_children_are_sorted_and_know_their_parent(acme: Org) -> None:
    root = await acme.create("Root")
    for name in ("Sales", "Engineering", "Legal"):
        await acme.create(name, root)
    data = await acme.data(
        "query($id: ID!) { orgNode(id: $id) { children { name depth parent { id name } } } }",
        id=root,
    )
    children = data["orgNode"]["children"]
    assert [child["name"] for child in children] == ["Engineering", "Legal", "Sales"]
    assert {child["depth"] for child in children} == {1}
    assert {child["parent"]["id"] for child in children} == {root}
    # The node, its children; the parent comes from the request's cache.
    assert (acme.calls, acme.waves) == (2, 2)


async def test_children_read_every_page(acme: Org, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(org_types, "CHILDREN_PAGE_SIZE", 2)
    root = await acme.create("Root")
    for index in range(5):
        await acme.create(f"Team {index}", root)
    data = await acme.data("query($id: ID!) { orgNode(id: $id) { children { name } } }", id=root)
    assert [c["name"] for c in data["orgNode"]["children"]] == [f"Team {i}" for i in range(5)]
    assert acme.calls == 1 + 3  # the node, then pages of 2, 2 and 1


async def build_tree(org: Org) -> tuple[str, dict[str, list[str]]]:
    """root → (A → (A1 → A1x, A2), B → B1); returns the root and each node's children."""
    by_name = {"root": await org.create("root")}
    tree: dict[str, list[str]] = {by_name["root"]: []}
    for name, parent_name in [
        ("A", "root"), ("B", "root"), ("A1", "A"), ("A2", "A"), ("A1x", "A1"), ("B1", "B"),
    ]:  # fmt: skip
        parent = by_name[parent_name]
        node = await org.create(name, parent)
        by_name[name] = node
        tree[parent].append(node)
        tree[node] = []
    return by_name["root"], tree


def pre_order(tree: dict[str, list[str]], node: str) -> list[str]:
    """Each node before its descendants; siblings by id (the key order of their paths)."""
    out: list[str] = []
    for child in sorted(tree[node], key=node_key):
        out.append(child)
        out.extend(pre_order(tree, child))
    return out


DESCENDANTS = """query($id: ID!, $first: Int, $after: String) {
  orgNode(id: $id) { descendants(first: $first, after: $after) {
    edges { cursor node { id name depth } } pageInfo { hasNextPage endCursor } } }
}"""


async def test_descendants_are_pre_order_and_page(acme: Org) -> None:
    top, tree = await build_tree(acme)
    other = await acme.create("other root")
    await acme.create("other child", other)
    expected = pre_order(tree, top)
    assert len(expected) == 6
    data = await acme.data(DESCENDANTS, id=top, first=100)
    edges = data["orgNode"]["descendants"]["edges"]
    assert [edge["node"]["id"] for edge in edges] == expected
    assert [edge["node"]["depth"] for edge in edges] == [len(path_of(n)) - 1 for n in expected]
    assert data["orgNode"]["descendants"]["pageInfo"] == {"hasNextPage": False, "endCursor": None}
    assert acme.calls == 2

    seen: list[str] = []
    after = None
    pages = 0
    while True:
        data = await acme.data(DESCENDANTS, id=top, first=2, after=after)
        connection = data["orgNode"]["descendants"]
        seen.extend(edge["node"]["id"] for edge in connection["edges"])
        pages += 1
        if not connection["pageInfo"]["hasNextPage"]:
            break
        after = connection["pageInfo"]["endCursor"]
        assert connection["edges"][-1]["cursor"] == after
    assert seen == expected
    assert pages == 3


async def test_ancestors_are_root_first_in_one_store_call(acme: Org) -> None:
    chain = [await acme.create("level 0")]
    for depth in range(1, 5):
        chain.append(await acme.create(f"level {depth}", chain[-1]))
    leaf = chain[-1]
    await acme.data("query($id: ID!) { orgNode(id: $id) { name } }", id=leaf)
    assert acme.calls == 1
    data = await acme.data(
        "query($id: ID!) { orgNode(id: $id) { depth ancestors { id name depth } } }", id=leaf
    )
    node = data["orgNode"]
    assert node["depth"] == 4
    assert [a["id"] for a in node["ancestors"]] == chain[:-1]
    assert [a["depth"] for a in node["ancestors"]] == [0, 1, 2, 3]
    assert (acme.calls, acme.waves) == (2, 2)  # the node, then all its ancestors at once


async def test_nested_children_cost_one_query_per_parent(acme: Org) -> None:
    roots = [await acme.create(f"root {i}") for i in range(3)]
    for root in roots:
        for j in range(2):
            await acme.create(f"child {j}", root)
    data = await acme.data("{ orgRoots { children { name parent { id } children { id } } } }")
    assert [len(root["children"]) for root in data["orgRoots"]] == [2, 2, 2]
    # roots (1), their children (3 concurrent), the grandchildren (6 concurrent); parents
    # come from the nodes already read.
    assert (acme.calls, acme.waves) == (1 + 3 + 6, 3)


async def test_parent_of_many_nodes_is_one_batch(acme: Org) -> None:
    parents = [await acme.create(f"p{i}") for i in range(4)]
    kids = [await acme.create("kid", parent) for parent in parents]
    query = " ".join(
        f'n{i}: orgNode(id: "{kid}") {{ parent {{ id }} }}' for i, kid in enumerate(kids)
    )
    data = await acme.data(f"{{ {query} }}")
    assert [data[f"n{i}"]["parent"]["id"] for i in range(4)] == parents
    assert (acme.calls, acme.waves) == (2, 2)  # the four nodes, then the four parents


async def test_a_missing_parent_is_not_found_and_writes_nothing(acme: Org) -> None:
    root = await acme.create("root")
    ghost = to_global_id("OrgNode", f"{node_key(root)}.01ARZ3NDEKTSV4RRFFQ69G5FAV")
    for parent in (ghost, to_global_id("OrgNode", "a..b"), to_global_id("Shop", "x")):
        _, codes = await acme.run(CREATE, name="orphan", parent=parent)
        assert codes == ["NOT_FOUND"]
    data = await acme.data("query($id: ID!) { orgNode(id: $id) { children { id } } }", id=root)
    assert data["orgNode"]["children"] == []
    assert [r["id"] for r in (await acme.data("{ orgRoots { id } }"))["orgRoots"]] == [root]


async def test_bad_names_are_refused(acme: Org) -> None:
    for name in ("", "x" * 201):
        result = await acme.execute(CREATE, name=name)
        assert result.data is None
        assert result.errors is not None
        # The app's error formatter reports a pydantic ValidationError as BAD_USER_INPUT.
        assert isinstance(result.errors[0].original_error, pydantic.ValidationError)
    assert (await acme.data("{ orgRoots { id } }"))["orgRoots"] == []


async def test_tenants_do_not_see_each_other(acme: Org, globex: Org) -> None:
    root = await acme.create("acme root")
    await acme.create("acme child", root)
    assert (await globex.data("{ orgRoots { id } }"))["orgRoots"] == []
    data = await globex.data("query($id: ID!) { orgNode(id: $id) { id } }", id=root)
    assert data["orgNode"] is None
    _, codes = await globex.run(CREATE, name="intruder", parent=root)
    assert codes == ["NOT_FOUND"]
    data = await acme.data("query($id: ID!) { orgNode(id: $id) { children { name } } }", id=root)
    assert data["orgNode"]["children"] == [{"name": "acme child"}]


async def test_node_registry_resolves_org_nodes(acme: Org) -> None:
    root = await acme.create("root")
    child = await acme.create("child", root)
    resolve = node_resolver("OrgNode")
    assert resolve is not None
    ctx, _ = acme.context()
    node = await resolve(ctx, from_global_id(child)[1])
    assert isinstance(node, org_types.OrgNode)
    assert (node.id, node.name, node.depth) == (child, "child", 1)
    assert await resolve(ctx, "no.such.path") is None


def test_record_builder_sets_parent_ref_and_depth() -> None:
    from datetime import UTC, datetime

    now = datetime.now(UTC)
    root = org_resolvers.org_node_record("R", "root", (), now)
    child = org_resolvers.org_node_record("C", "child", root.path, now)
    assert (root.path, root.parent_ref, root.depth) == (("R",), "ROOT", 0)
    assert (child.path, child.parent_ref, child.depth) == (("R", "C"), "R", 1)

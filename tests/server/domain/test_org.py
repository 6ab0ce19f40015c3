"""Org trees: roots, children by name, pre-order descendants with paging, ancestors in one
batched read, depth and parent, with the store calls each query costs."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

from generated.table import TABLE
from keygraph.plan import TableDef
from keygraph.store import Store
from server.auth.tokens import issue_token
from server.domain import org as org_domain
from server.settings import Settings
from tests.ids import from_global_id, to_global_id
from tests.server.conftest import Api, app_of

CREATE = """mutation($name: String!, $parent: ID) {
  createOrgNode(input: {name: $name, parentId: $parent}) { id name depth }
}"""


class Org:
    """The API as one tenant (conftest's client), with the store calls and waves of the last
    request as the dev-mode response reports them."""

    def __init__(self, api: Any) -> None:
        self.api = api
        self.calls = 0
        self.waves = 0

    async def run(self, query: str, **variables: Any) -> tuple[dict[str, Any] | None, list[str]]:
        body = await self.api(query, variables)
        self.calls = body["extensions"]["storeCalls"]
        self.waves = body["extensions"]["storeWaves"]
        codes = [error["extensions"]["code"] for error in body.get("errors", [])]
        return body.get("data"), codes

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
def org(acme: Any) -> Org:
    return Org(acme)


@pytest.fixture
def org_globex(globex: Any) -> Org:
    return Org(globex)


def path_of(global_id: str) -> tuple[str, ...]:
    type_name, local = from_global_id(global_id)
    assert type_name == "OrgNode"
    return tuple(local.split("."))


def node_key(global_id: str) -> str:
    return path_of(global_id)[-1]


async def test_roots_come_by_name_then_id(org: Org) -> None:
    created = [(name, await org.create(name)) for name in ("Beta", "Alpha", "Gamma", "Alpha")]
    data = await org.data("{ orgRoots { id name depth parent { id } } }")
    expected = sorted(created, key=lambda pair: (pair[0], node_key(pair[1])))
    assert [(root["name"], root["id"]) for root in data["orgRoots"]] == expected
    assert {root["depth"] for root in data["orgRoots"]} == {0}
    assert all(root["parent"] is None for root in data["orgRoots"])
    assert org.calls == 1


async def test_children_are_sorted_and_know_their_parent(org: Org) -> None:
    root = await org.create("Root")
    for name in ("Sales", "Engineering", "Legal"):
        await org.create(name, root)
    data = await org.data(
        "query($id: ID!) { orgNode(id: $id) { children { name depth parent { id name } } } }",
        id=root,
    )
    children = data["orgNode"]["children"]
    assert [child["name"] for child in children] == ["Engineering", "Legal", "Sales"]
    assert {child["depth"] for child in children} == {1}
    assert {child["parent"]["id"] for child in children} == {root}
    # The node, its children; the parent comes from the request's cache.
    assert (org.calls, org.waves) == (2, 2)


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


async def test_descendants_are_pre_order_and_page(org: Org) -> None:
    top, tree = await build_tree(org)
    other = await org.create("other root")
    await org.create("other child", other)
    expected = pre_order(tree, top)
    assert len(expected) == 6
    data = await org.data(DESCENDANTS, id=top, first=100)
    edges = data["orgNode"]["descendants"]["edges"]
    assert [edge["node"]["id"] for edge in edges] == expected
    assert [edge["node"]["depth"] for edge in edges] == [len(path_of(n)) - 1 for n in expected]
    page_info = data["orgNode"]["descendants"]["pageInfo"]
    assert page_info == {"hasNextPage": False, "endCursor": edges[-1]["cursor"]}
    assert org.calls == 2

    seen: list[str] = []
    after = None
    pages = 0
    while True:
        data = await org.data(DESCENDANTS, id=top, first=2, after=after)
        connection = data["orgNode"]["descendants"]
        seen.extend(edge["node"]["id"] for edge in connection["edges"])
        pages += 1
        if not connection["pageInfo"]["hasNextPage"]:
            break
        after = connection["pageInfo"]["endCursor"]
        assert connection["edges"][-1]["cursor"] == after
    assert seen == expected
    assert pages == 3


async def test_ancestors_are_root_first_in_one_store_call(org: Org) -> None:
    chain = [await org.create("level 0")]
    for depth in range(1, 5):
        chain.append(await org.create(f"level {depth}", chain[-1]))
    leaf = chain[-1]
    await org.data("query($id: ID!) { orgNode(id: $id) { name } }", id=leaf)
    assert org.calls == 1
    data = await org.data(
        "query($id: ID!) { orgNode(id: $id) { depth ancestors { id name depth } } }", id=leaf
    )
    node = data["orgNode"]
    assert node["depth"] == 4
    assert [a["id"] for a in node["ancestors"]] == chain[:-1]
    assert [a["depth"] for a in node["ancestors"]] == [0, 1, 2, 3]
    assert (org.calls, org.waves) == (1, 1)  # the node read with all its ancestors at once


async def test_nested_children_cost_one_query_per_parent(org: Org) -> None:
    roots = [await org.create(f"root {i}") for i in range(3)]
    for root in roots:
        for j in range(2):
            await org.create(f"child {j}", root)
    query = "{ orgRoots { children(first: 5) { name parent { id } children(first: 5) { id } } } }"
    data = await org.data(query)
    assert [len(root["children"]) for root in data["orgRoots"]] == [2, 2, 2]
    # roots (1), their children (3 concurrent), the grandchildren (6 concurrent); parents
    # come from the nodes already read.
    assert (org.calls, org.waves) == (1 + 3 + 6, 3)


async def test_parent_of_many_nodes_is_one_batch(org: Org) -> None:
    parents = [await org.create(f"p{i}") for i in range(4)]
    kids = [await org.create("kid", parent) for parent in parents]
    query = " ".join(
        f'n{i}: orgNode(id: "{kid}") {{ parent {{ id }} }}' for i, kid in enumerate(kids)
    )
    data = await org.data(f"{{ {query} }}")
    assert [data[f"n{i}"]["parent"]["id"] for i in range(4)] == parents
    assert (org.calls, org.waves) == (1, 1)  # the four nodes with their ancestors at once


async def test_a_missing_parent_is_not_found_and_writes_nothing(org: Org) -> None:
    root = await org.create("root")
    ghost = to_global_id("OrgNode", f"{node_key(root)}.01ARZ3NDEKTSV4RRFFQ69G5FAV")
    for parent in (ghost, to_global_id("OrgNode", "a..b"), to_global_id("Shop", "x")):
        _, codes = await org.run(CREATE, name="orphan", parent=parent)
        assert codes == ["NOT_FOUND"]
    data = await org.data("query($id: ID!) { orgNode(id: $id) { children { id } } }", id=root)
    assert data["orgNode"]["children"] == []
    assert [r["id"] for r in (await org.data("{ orgRoots { id } }"))["orgRoots"]] == [root]


async def test_bad_input_is_refused(org: Org) -> None:
    for name in ("", "x" * 201):
        data, codes = await org.run(CREATE, name=name)
        assert data is None
        assert codes == ["BAD_USER_INPUT"]
    assert (await org.data("{ orgRoots { id } }"))["orgRoots"] == []
    root = await org.create("root")
    _, codes = await org.run(
        "query($id: ID!) { orgNode(id: $id) { descendants(first: -1) { edges { cursor } } } }",
        id=root,
    )
    assert codes == ["BAD_USER_INPUT"]
    _, codes = await org.run(
        "query($id: ID!, $a: String) { orgNode(id: $id) { descendants(after: $a) { edges "
        "{ cursor } } } }",
        id=root,
        a="forged",
    )
    assert codes == ["INVALID_CURSOR"]


async def test_tenants_do_not_see_each_other(org: Org, org_globex: Org) -> None:
    root = await org.create("acme root")
    await org.create("acme child", root)
    assert (await org_globex.data("{ orgRoots { id } }"))["orgRoots"] == []
    data = await org_globex.data("query($id: ID!) { orgNode(id: $id) { id } }", id=root)
    assert data["orgNode"] is None
    _, codes = await org_globex.run(CREATE, name="intruder", parent=root)
    assert codes == ["NOT_FOUND"]
    data = await org.data("query($id: ID!) { orgNode(id: $id) { children { name } } }", id=root)
    assert data["orgNode"]["children"] == [{"name": "acme child"}]


def test_record_builder_sets_parent_ref_and_depth() -> None:
    now = datetime.now(UTC)
    root = org_domain.org_node_record("R", "root", (), now)
    child = org_domain.org_node_record("C", "child", root.path, now)
    assert (root.path, root.parent_ref, root.depth) == (("R",), "ROOT", 0)
    assert (child.path, child.parent_ref, child.depth) == (("R", "C"), "R", 1)


async def test_a_descendants_cursor_only_continues_its_own_node(org: Org) -> None:
    top, tree = await build_tree(org)
    data = await org.data(DESCENDANTS, id=top, first=1)
    cursor = data["orgNode"]["descendants"]["pageInfo"]["endCursor"]
    assert cursor is not None
    child = tree[top][0]
    _, codes = await org.run(DESCENDANTS, id=child, first=1, after=cursor)
    assert codes == ["INVALID_CURSOR"]
    data = await org.data(DESCENDANTS, id=top, first=100, after=cursor)
    assert [e["node"]["id"] for e in data["orgNode"]["descendants"]["edges"]] == pre_order(
        tree, top
    )[1:]


@pytest.mark.dynamodb_local
async def test_org_tree_on_dynamodb_local(
    store_factory: Callable[[str, TableDef], Awaitable[Store]], settings: Settings
) -> None:
    store = await store_factory("dynamodb-local", TABLE)
    transport = httpx.ASGITransport(app=app_of(settings, store))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        org = Org(Api(client, issue_token(settings, "acme", roles=["admin"])))
        chain = [await org.create("level 0")]
        for depth in range(1, 4):
            chain.append(await org.create(f"level {depth}", chain[-1]))
        await org.create("sibling", chain[0])
        data = await org.data(
            "query($id: ID!) { orgNode(id: $id) { depth ancestors { id } parent { id } } }",
            id=chain[-1],
        )
        assert data["orgNode"]["ancestors"] == [{"id": node} for node in chain[:-1]]
        assert data["orgNode"]["parent"] == {"id": chain[-2]}
        assert (org.calls, org.waves) == (1, 1)  # the node with its ancestors
        data = await org.data(DESCENDANTS, id=chain[0], first=2)
        assert len(data["orgNode"]["descendants"]["edges"]) == 2
        assert data["orgNode"]["descendants"]["pageInfo"]["hasNextPage"]
        ghost = to_global_id("OrgNode", f"{node_key(chain[0])}.01ARZ3NDEKTSV4RRFFQ69G5FAV")
        assert (await org.run(CREATE, name="orphan", parent=ghost))[1] == ["NOT_FOUND"]


async def test_a_failed_field_leaves_the_loads_it_shares_to_the_others(org: Org) -> None:
    # x.ancestors and y.parent load the same node through one loader; x.descendants fails,
    # so the executor cancels x's other fields: y must still get its parent.
    root = await org.create("root")
    child = await org.create("child", root)
    query = """query($child: ID!) {
      x: orgNode(id: $child) { descendants(after: "not a cursor") { edges { cursor } }
                               ancestors { id } }
      y: orgNode(id: $child) { parent { id } }
    }"""
    data, codes = await org.run(query, child=child)
    assert codes == ["INVALID_CURSOR"]
    assert data == {"x": None, "y": {"parent": {"id": root}}}

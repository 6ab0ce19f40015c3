"""Relay clients: relay-compiler (from npm, `make relay-compiler`) compiles documents with
`@connection` on every connection of schema.graphql and a `@refetchable` fragment against
it, so PageInfo, edges and `node` are what the Relay connection and object identification
specs require. Skipped with how to get it when it is missing (a failure under CI)."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

from tests.keygraph.api.relay_compiler import relay_compiler
from tests.server.conftest import Api

ROOT = Path(__file__).parents[3]
SCHEMA = ROOT / "schema.graphql"

CONNECTIONS = """
fragment UsersList_query on Query
  @refetchable(queryName: "UsersListPaginationQuery")
  @argumentDefinitions(count: {type: "Int", defaultValue: 10}, cursor: {type: "String"}) {
  users(first: $count, after: $cursor) @connection(key: "UsersList_users") {
    edges { node { id name } }
  }
}

fragment UserOrders_user on User
  @refetchable(queryName: "UserOrdersPaginationQuery")
  @argumentDefinitions(count: {type: "Int", defaultValue: 5}, cursor: {type: "String"}) {
  orders(first: $count, after: $cursor) @connection(key: "UserOrders_orders") {
    edges { node { id status totalCents items { sku quantity } } }
  }
}

fragment UserGroups_user on User {
  groups(first: 10) @connection(key: "UserGroups_groups") { edges { node { id name } } }
}

fragment OrdersByStatus_query on Query
  @argumentDefinitions(count: {type: "Int", defaultValue: 10}, cursor: {type: "String"}) {
  ordersByStatus(status: PAID, first: $count, after: $cursor)
    @connection(key: "OrdersByStatus_ordersByStatus") {
    edges { node { id } }
  }
}

fragment UserMemberships_user on User {
  memberships(first: 10) @connection(key: "UserMemberships_memberships") {
    edges { node { groupId } }
  }
}

fragment ShopsInCell_query on Query {
  shopsInCell(geoCell: "u33", geohashFrom: "u33d", geohashTo: "u33e", first: 10)
    @connection(key: "ShopsInCell_shopsInCell") {
    edges { node { id name } }
  }
}

fragment UserWithAddresses_query on Query {
  userWithAddresses(userId: "u1", first: 10)
    @connection(key: "UserWithAddresses_userWithAddresses") {
    edges { node { __typename ... on User { id } ... on Address { id label } } }
  }
}

fragment OrgTree_node on OrgNode
  @refetchable(queryName: "OrgTreeRefetchQuery")
  @argumentDefinitions(count: {type: "Int", defaultValue: 20}, cursor: {type: "String"}) {
  name
  descendants(first: $count, after: $cursor) @connection(key: "OrgTree_descendants") {
    edges { node { id name depth } }
  }
}

query AppQuery {
  ...UsersList_query
  ...OrdersByStatus_query
  viewer { tenant }
}
"""


def connections_in(schema: str) -> set[str]:
    """The connection types schema.graphql declares."""
    return set(re.findall(r"^type (\w+Connection) ", schema, re.MULTILINE))


def test_relay_compiler_accepts_every_connection(tmp_path: Path) -> None:
    compiler = relay_compiler()
    declared = connections_in(SCHEMA.read_text())
    used = {"UserConnection", "OrderConnection", "GroupConnection", "OrgNodeConnection"}
    used |= {"MembershipConnection", "ShopConnection", "UserWithAddressesItemConnection"}
    assert declared == used, declared ^ used
    (tmp_path / "src").mkdir()
    tagged = "".join(f"graphql`{d.strip()}\n`;\n" for d in CONNECTIONS.split("\n\n") if d)
    (tmp_path / "src" / "documents.ts").write_text(tagged)
    config = {"src": "./src", "schema": str(SCHEMA), "language": "typescript"}
    (tmp_path / "relay.config.json").write_text(json.dumps(config))
    done = subprocess.run(
        [str(compiler)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    written = {path.name for path in (tmp_path / "src" / "__generated__").iterdir()}
    assert {"UsersListPaginationQuery.graphql.ts", "AppQuery.graphql.ts"} <= written


PAGES = """query($first: Int, $after: String) {
  users(first: $first, after: $after) {
    edges { cursor node { name } }
    pageInfo { hasNextPage hasPreviousPage startCursor endCursor } } }"""


async def test_page_info_names_both_ends_of_a_page(acme: Api) -> None:
    for name in ("Ada", "Bob", "Cy"):
        await acme.create_user(f"{name.lower()}@acme.test", name)
    first = (await acme.data(PAGES, {"first": 2}))["users"]
    cursors = [edge["cursor"] for edge in first["edges"]]
    assert first["pageInfo"] == {
        "hasNextPage": True,
        "hasPreviousPage": False,  # pages go forward only
        "startCursor": cursors[0],
        "endCursor": cursors[-1],
    }
    rest = (await acme.data(PAGES, {"first": 2, "after": cursors[-1]}))["users"]
    assert [edge["node"]["name"] for edge in rest["edges"]] == ["Cy"]
    assert rest["pageInfo"]["startCursor"] == rest["edges"][0]["cursor"]
    assert rest["pageInfo"]["hasNextPage"] is False
    empty = await acme.data(PAGES, {"first": 2, "after": rest["pageInfo"]["endCursor"]})
    assert empty["users"]["pageInfo"]["startCursor"] is None

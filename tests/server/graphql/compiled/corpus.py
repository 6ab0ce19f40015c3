"""Operations both executors must answer alike: every field of the schema, fragments, inline
fragments on Node, aliases, @skip/@include, variables and defaults, cursors, and failures
(bad arguments, bad cursors, missing objects, errors nulling their parents). Each takes the
seeded ids it needs from `Seeded`."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

_ORDER = (
    "id status totalCents currency createdAt version items { sku name quantity unitPriceCents }"
)
_USER = "id email name createdAt version"


@dataclass(frozen=True)
class Seeded:
    """Ids of one tenant's seeded objects."""

    users: list[str]
    emails: list[str]
    orders: list[str]
    groups: list[str]
    org_nodes: list[str]
    shops: list[str]
    addresses: list[str]


SEEDED_IDS = """{
  users(first: 20) { edges { node { id email addresses { id }
    orders(first: 20) { edges { node { id } } } groups { edges { node { id } } } } } }
  orgRoots { id descendants(first: 50) { edges { node { id } } } }
  shopsNear(lat: 52.52, lng: 13.405, radiusKm: 50, first: 50) { shop { id } }
}"""
"""The query `Seeded` is read with."""


def seeded(data: dict[str, Any]) -> Seeded:
    users = [edge["node"] for edge in data["users"]["edges"]]
    roots = data["orgRoots"]
    return Seeded(
        users=[user["id"] for user in users],
        emails=[user["email"] for user in users],
        orders=[e["node"]["id"] for user in users for e in user["orders"]["edges"]],
        groups=sorted({e["node"]["id"] for user in users for e in user["groups"]["edges"]}),
        org_nodes=[root["id"] for root in roots]
        + [e["node"]["id"] for root in roots for e in root["descendants"]["edges"]],
        shops=[found["shop"]["id"] for found in data["shopsNear"]],
        addresses=[address["id"] for user in users for address in user["addresses"]],
    )


Operation = tuple[str, dict[str, Any]]
Case = Callable[[Seeded], Operation]

QUERIES: list[Case] = [
    lambda s: (f"query($id: ID!) {{ user(id: $id) {{ {_USER} }} }}", {"id": s.users[0]}),
    lambda s: (
        f"""query($id: ID!) {{ user(id: $id) {{ {_USER}
          addresses {{ id label line1 line2 city postalCode country createdAt version isDefault }}
          defaultAddress {{ id label isDefault }}
          orders(first: 3) {{ edges {{ cursor node {{ {_ORDER} user {{ id name }} }} }}
            pageInfo {{ hasNextPage endCursor }} }}
          groups(first: 2) {{ edges {{ cursor node {{ id name createdAt version }} }}
            pageInfo {{ hasNextPage endCursor }} }} }} }}""",
        {"id": s.users[0]},
    ),
    lambda s: (
        """query($email: String!) { userByEmail(email: $email) { id email addresses { city } } }""",
        {"email": s.emails[1].upper()},
    ),
    lambda s: (
        f"""{{ users(first: 3) {{ edges {{ cursor node {{ {_USER}
          orders(first: 2) {{ edges {{ node {{ id totalCents }} }} }}
          groups {{ edges {{ node {{ id name members(first: 2) {{ edges {{ node {{ id }} }} }}
            }} }} }}
        }} }} pageInfo {{ hasNextPage endCursor }} }} }}""",
        {},
    ),
    lambda s: (
        """query($after: String) { users(first: 2, after: $after) { edges { node { id } }
          pageInfo { hasNextPage endCursor } } }""",
        {"after": None},
    ),
    lambda s: (
        f"""query($id: ID!) {{ order(id: $id) {{ {_ORDER} user {{ {_USER} }} }} }}""",
        {"id": s.orders[0]},
    ),
    lambda s: (
        """query($status: OrderStatus!) { ordersByStatus(status: $status, first: 4) {
          edges { cursor node { id status user { email } } } pageInfo { hasNextPage endCursor }
            } }""",
        {"status": "PENDING"},
    ),
    lambda s: (
        """query($id: ID!) { group(id: $id) { id name createdAt version
          members(first: 2) { edges { cursor node { id name } } pageInfo { hasNextPage endCursor } }
          all: members { edges { node { id } } } } }""",
        {"id": s.groups[0]},
    ),
    lambda s: (
        """query($id: ID!) { orgNode(id: $id) { id name depth version
          parent { id name } ancestors { id depth } children { id name }
          two: children(first: 2) { id }
          descendants(first: 3) { edges { cursor node { id depth } } pageInfo { hasNextPage
            endCursor } }
        } }""",
        {"id": s.org_nodes[-1]},
    ),
    lambda s: (
        """{ orgRoots(first: 2) { id name parent { id } children(first: 1) { name
          children { id ancestors { name } } } } }""",
        {},
    ),
    lambda s: (
        """query($id: ID!) { shop(id: $id) { id name lat lng version } }""",
        {"id": s.shops[0]},
    ),
    lambda s: (
        """{ shopsNear(lat: 52.52, lng: 13.405, radiusKm: 20, first: 5) {
          distanceKm shop { id name lat lng } } }""",
        {},
    ),
    lambda s: ("{ viewer { tenant subject } __typename }", {}),
    lambda s: (
        """query($a: ID!, $b: ID!, $c: ID!, $d: ID!, $e: ID!, $f: ID!) {
          a: node(id: $a) { ...Any } b: node(id: $b) { ...Any } c: node(id: $c) { ...Any }
          d: node(id: $d) { ...Any } e: node(id: $e) { ...Any } f: node(id: $f) { ...Any } }
        fragment Any on Node { __typename id
          ... on User { email orders(first: 1) { edges { node { id } } } }
          ... on Order { status user { name } }
          ... on Group { name members(first: 1) { edges { node { id } } } }
          ... on OrgNode { depth parent { id } }
          ... on Shop { lat lng }
          ... on Address { city isDefault } }""",
        {
            "a": s.users[0],
            "b": s.orders[0],
            "c": s.groups[0],
            "d": s.org_nodes[-1],
            "e": s.shops[0],
            "f": s.addresses[0],
        },
    ),
    lambda s: (
        """query($id: ID!, $more: Boolean!, $less: Boolean = false) {
          user(id: $id) { ...Basic id @skip(if: $less)
            orders(first: 1) @include(if: $more) { edges { node { id } } }
            groups @skip(if: $more) { edges { node { id } } } }
          again: user(id: $id) { name @include(if: $less) } }
        fragment Basic on User { name email @include(if: $more) }""",
        {"id": s.users[0], "more": True},
    ),
    lambda s: (
        """query($id: ID!, $more: Boolean!) { user(id: $id) { id
          orders(first: 1) @include(if: $more) { edges { node { id } } }
          groups @skip(if: $more) { edges { node { id } } } } }""",
        {"id": s.users[0], "more": False},
    ),
    # Missing objects, bad arguments and cursors, and what they null.
    lambda s: ("""{ user(id: "VXNlcjpub25l") { id } node(id: "T3JkZXI6bm9uZQ==") { id } }""", {}),
    lambda s: ("""{ user(id: "not a global id") { id } }""", {}),
    lambda s: ("""{ users(first: 1000) { edges { node { id } } } }""", {}),
    lambda s: ("""{ users(first: 1, after: "garbage") { edges { node { id } } } }""", {}),
    lambda s: (
        """query($id: ID!) { user(id: $id) { id orders(after: "garbage") { edges { node { id } } }
          name } other: user(id: $id) { name } }""",
        {"id": s.users[0]},
    ),
    lambda s: (
        """query($id: ID!) { user(id: $id) { id
          orders(from: "2030-01-01T00:00:00+00:00", to: "2020-01-01T00:00:00+00:00") {
            edges { node { id } } } } }""",
        {"id": s.users[0]},
    ),
    lambda s: (
        """{ users(first: 2) { edges { node { id groups(after: "garbage") { edges { node { id }
          } } } } }
          viewer { tenant } }""",
        {},
    ),
    lambda s: (
        """{ shopsNear(lat: 52.52, lng: 13.405, radiusKm: 500) { distanceKm } viewer { tenant }
          }""",
        {},
    ),
    lambda s: (
        """query($id: ID!) { orgNode(id: $id) { children(first: 500) { id } } }""",
        {"id": s.org_nodes[0]},
    ),
    lambda s: ("""{ node(id: "%%%") { id } orgNode(id: "T3JnTm9kZTou") { id } }""", {}),
    lambda s: (
        """query($id: ID!) { group(id: $id) { members(first: 1, after: "x") { edges { node { id
          } } } }
          shop(id: "U2hvcDpub25l") { id } }""",
        {"id": s.groups[0]},
    ),
    lambda s: ("""query Named { viewer { tenant } } query Other { __typename }""", {}),
]
"""Queries, run on one store by both executors."""

MUTATIONS: list[Case] = [
    lambda s: (
        """mutation { createUser(input: {email: "new@example.org", name: "New"}) {
          email name version addresses { id } defaultAddress { id }
          orders { edges { node { id } } pageInfo { hasNextPage endCursor } } } }""",
        {},
    ),
    lambda s: (
        """mutation($email: String!) { createUser(input: {email: $email, name: "Twin"}) { id } }""",
        {"email": s.emails[0]},
    ),
    lambda s: (
        """mutation($id: ID!) { updateUser(input: {id: $id, expectedVersion: 1, name: "Renamed"}) {
          id name email version } again: updateUser(input: {id: $id, expectedVersion: 1, name:
            "X"}) {
          id } }""",
        {"id": s.users[1]},
    ),
    lambda s: (
        """mutation($id: ID!) { addAddress(input: {userId: $id, label: "Home", line1: "1 Road",
          city: "Berlin", postalCode: "10115", country: "DE"}) {
          address { label line1 line2 city postalCode country version isDefault }
          user { id version defaultAddress { label } } } }""",
        {"id": s.users[2]},
    ),
    lambda s: (
        """mutation($id: ID!) { createOrder(input: {userId: $id, currency: "EUR", items: [
          {sku: "A", name: "Apple", quantity: 2, unitPriceCents: 150}]}) {
          status totalCents currency version items { sku name quantity unitPriceCents }
          user { id email } } }""",
        {"id": s.users[0]},
    ),
    lambda s: (
        """mutation { createOrder(input: {userId: "VXNlcjpub25l", currency: "EUR", items: []}) {
          status } }""",
        {},
    ),
    lambda s: (
        """mutation($id: ID!) { updateOrderStatus(input: {id: $id, status: PAID,
          expectedVersion: 1}) {
          id status version user { id } } }""",
        {"id": s.orders[1]},
    ),
    lambda s: (
        """mutation($id: ID!) { deleteOrder(input: {id: $id, expectedVersion: 7}) { deletedId }
          }""",
        {"id": s.orders[2]},
    ),
    lambda s: (
        """mutation($g: ID!, $u: ID!) { addGroupMember(groupId: $g, userId: $u) { id name version
          members(first: 50) { edges { node { id } } } }
          removeGroupMember(groupId: $g, userId: $u) { id version } }""",
        {"g": s.groups[0], "u": s.users[3]},
    ),
    lambda s: (
        """mutation { createGroup(input: {name: "G"}) { name version
          members { edges { node { id } } pageInfo { hasNextPage endCursor } } } }""",
        {},
    ),
    lambda s: (
        """mutation($id: ID!) { createOrgNode(input: {name: "Team", parentId: $id}) { name depth
          version parent { id } ancestors { id } children { id } } }""",
        {"id": s.org_nodes[0]},
    ),
    lambda s: (
        """mutation($id: ID!) { deleteOrgNode(input: {id: $id, expectedVersion: 99}) {
          deletedId } }""",
        {"id": s.org_nodes[0]},
    ),
    lambda s: (
        """mutation { createShop(input: {name: "Shop", lat: 52.5, lng: 13.4}) { name lat lng
          version } }""",
        {},
    ),
    lambda s: (
        """mutation($id: ID!) { moveShop(input: {id: $id, expectedVersion: 1, lat: 48.1, lng:
          11.6}) {
          id name lat lng version } }""",
        {"id": s.shops[0]},
    ),
    lambda s: (
        """mutation($id: ID!) { deleteShop(input: {id: $id, expectedVersion: 1}) { deletedId
          complete }
          after: createShop(input: {name: "Late", lat: 1, lng: 2}) { name } }""",
        {"id": s.shops[1]},
    ),
    lambda s: (
        """mutation($id: ID!) { deleteUser(input: {id: $id, expectedVersion: 1}) { deletedId
          complete } }""",
        {"id": s.users[4]},
    ),
    lambda s: (
        """mutation($id: ID!) { updateUser(input: {id: $id, expectedVersion: 1, email: "bad"})
          { id }
          createGroup(input: {name: ""}) { name } }""",
        {"id": s.users[5]},
    ),
]
"""Mutations, run by each executor on its own copy of the seeded store, in order; they
select nothing the server makes up (new ids, times), so both copies answer alike."""

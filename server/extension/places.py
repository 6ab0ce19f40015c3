"""schema.graphql's mutations of org trees and shops, on the spec's API: a node's children
counted on its parent, a subtree deleted or moved in one step or as a cleanup that goes on
(server/domain/org.py, org_changes.py); a shop kept in the cells of its position
(server/domain/shops.py)."""

from __future__ import annotations

from typing import Any

from generated import authz
from keygraph import errors
from keygraph.api import Extension
from keygraph.caller import Caller
from server.domain import org, org_changes, shops

from .ids import local_of, path_of
from .refusals import as_api_errors
from .writing import by_id, deleted, writer

EXTENSION = Extension('''
"""A new org node; without parentId it is a root."""
input CreateOrgNodeInput {
  name: String!
  parentId: ID = null
}

"""An org node to delete, checked against the version last read."""
input DeleteOrgNodeInput {
  id: ID!
  expectedVersion: Int!
  """Delete the node's whole subtree; without it only a leaf."""
  cascade: Boolean! = false
}

"""Where an org node and its subtree move to."""
input MoveOrgNodeInput {
  id: ID!
  expectedVersion: Int!
  """The new parent; the node becomes a root when left out."""
  newParentId: ID = null
}

"""An org node after a move."""
type MoveOrgNodePayload {
  """The node at its new place; its id, and its descendants' ids, changed."""
  node: OrgNode!
  """False while a large move goes on; its subtree refuses changes until done."""
  complete: Boolean!
}

"""A new shop: its name and position in degrees."""
input CreateShopInput {
  name: String!
  lat: Float!
  lng: Float!
}

"""A shop's new position, checked against the version last read."""
input MoveShopInput {
  id: ID!
  expectedVersion: Int!
  lat: Float!
  lng: Float!
}

extend type Mutation {
  """Create an org node under parentId, or a root; NOT_FOUND for a missing parent."""
  createOrgNode(input: CreateOrgNodeInput!): OrgNode!
  """Delete an org node: a leaf, or its whole subtree with cascade: true."""
  deleteOrgNode(input: DeleteOrgNodeInput!): DeletePayload!
  """Move an org node and its subtree under another parent, or make it a root."""
  moveOrgNode(input: MoveOrgNodeInput!): MoveOrgNodePayload!
  """Create a shop at a position."""
  createShop(input: CreateShopInput!): Shop!
  """Move a shop to a new position; a stale expectedVersion is a CONFLICT."""
  moveShop(input: MoveShopInput!): Shop!
  """Delete a shop; a stale expectedVersion is a CONFLICT."""
  deleteShop(input: DeleteInput!): DeletePayload!
}
''')


def _may_node(may: Any) -> Any:
    """The guard of a change to a node: its id an OrgNode's, then the rule."""

    def guard(caller: Caller, input: dict[str, Any]) -> bool:
        path_of(input["id"])
        return bool(may(caller))

    return guard


@EXTENSION.field("Mutation.createOrgNode", guard=authz.may_create_org_node)
async def create_org_node(_parent: Any, info: Any, input: dict[str, Any]) -> Any:
    given = input["parent_id"]
    missing = errors.NotFound(f"no OrgNode with id {given!r}")
    parent: org.Path = ()
    if given is not None:
        try:
            parent = path_of(given)
        except errors.NotFound:
            raise missing from None
    try:
        with as_api_errors():
            return await org.create_org_node(
                writer(info), info.context.tenant, input["name"], parent
            )
    except errors.NotFound as exc:
        raise missing from exc


@EXTENSION.field("Mutation.deleteOrgNode", guard=_may_node(authz.may_delete_org_node))
async def delete_org_node(_parent: Any, info: Any, input: dict[str, Any]) -> dict[str, Any]:
    path = path_of(input["id"])
    with as_api_errors():
        complete = await org_changes.delete_org_node(
            writer(info), info.context.tenant, path, input["expected_version"], input["cascade"]
        )
    return {"deleted_id": input["id"], "complete": complete}


@EXTENSION.field("Mutation.moveOrgNode", guard=_may_node(authz.may_update_org_node))
async def move_org_node(_parent: Any, info: Any, input: dict[str, Any]) -> dict[str, Any]:
    path = path_of(input["id"])
    given = input["new_parent_id"]
    parent = () if given is None else path_of(given)
    with as_api_errors():
        node, complete = await org_changes.move_org_node(
            writer(info), info.context.tenant, path, input["expected_version"], parent
        )
    return {"node": node, "complete": complete}


@EXTENSION.field("Mutation.createShop", guard=authz.may_create_shop)
async def create_shop(_parent: Any, info: Any, input: dict[str, Any]) -> Any:
    with as_api_errors():
        return await shops.create_shop(
            writer(info), info.context.tenant, input["name"], input["lat"], input["lng"]
        )


@EXTENSION.field("Mutation.moveShop", guard=by_id("Shop", authz.may_update_shop))
async def move_shop(_parent: Any, info: Any, input: dict[str, Any]) -> Any:
    shop_id = local_of(input["id"], "Shop")
    with as_api_errors():
        return await shops.move_shop(
            writer(info),
            info.context.tenant,
            shop_id,
            input["expected_version"],
            input["lat"],
            input["lng"],
        )


@EXTENSION.field("Mutation.deleteShop", guard=by_id("Shop", authz.may_delete_shop))
async def delete_shop(_parent: Any, info: Any, input: dict[str, Any]) -> dict[str, Any]:
    return await deleted(info, input, "Shop", shops.delete_shop)

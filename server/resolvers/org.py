"""Root fields for org trees: a node by id, the roots, and creating a node."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime

import strawberry

from generated.keys.org_node import key as org_node_key
from generated.models.org_node import OrgNode as OrgNodeRecord
from generated.table import TABLE
from keygraph.errors import TransactionCanceled
from keygraph.plan import Check, Condition, Put

from ..context import Info
from ..errors import BadUserInput, NotFound
from ..ids import new_id
from ..types.node import lookup_id
from ..types.org import (
    MAX_LEVELS,
    ROOT_REF,
    TYPE_NAME,
    OrgNode,
    load_children,
    load_org_node,
    node_path,
    parse_path,
)

CONDITION_FAILED = "ConditionalCheckFailed"


@strawberry.input(description="A new org node; without parentId it is a root.")
class CreateOrgNodeInput:
    name: str
    parent_id: strawberry.ID | None = None


def org_node_record(
    node_id: str, name: str, parent_path: Sequence[str], created_at: datetime
) -> OrgNodeRecord:
    """A node below parent_path (empty for a root); pydantic checks the fields."""
    path = (*parent_path, node_id)
    return OrgNodeRecord(
        node_id=node_id,
        path=path,
        parent_ref=parent_path[-1] if parent_path else ROOT_REF,
        name=name,
        depth=len(path) - 1,
        created_at=created_at,
    )


@strawberry.type
class OrgQuery:
    @strawberry.field(description="An org node by id.")
    async def org_node(self, info: Info, id: strawberry.ID) -> OrgNode | None:
        local = lookup_id(id, TYPE_NAME)
        path = None if local is None else parse_path(local)
        return None if path is None else await load_org_node(info.context, path)

    @strawberry.field(description="The roots of the tenant's org trees, by name.")
    async def org_roots(self, info: Info) -> list[OrgNode]:
        return await load_children(info.context, ROOT_REF)


@strawberry.type
class OrgMutation:
    @strawberry.mutation(
        description="Create an org node under parentId, or a root; NOT_FOUND for a missing parent."
    )
    async def create_org_node(self, info: Info, input: CreateOrgNodeInput) -> OrgNode:
        ctx = info.context
        parent_path: tuple[str, ...] = ()
        if input.parent_id is not None:
            found = node_path(input.parent_id)
            if found is None:
                raise NotFound(f"no OrgNode with id {input.parent_id!r}")
            parent_path = found
        if len(parent_path) >= MAX_LEVELS:
            raise BadUserInput(f"an org tree has at most {MAX_LEVELS} levels")
        record = org_node_record(new_id(), input.name, parent_path, datetime.now(UTC))
        put = Put(
            record.to_item(ctx.tenant), conditions=(Condition("not_exists", TABLE.partition_key),)
        )
        if not parent_path:
            await ctx.session.store.put(put)
            return OrgNode.from_record(record)
        # The parent's path is in its id, so its existence is checked in the same
        # transaction that writes the child: no read, and no child of a missing parent.
        parent_exists = Check(
            org_node_key(ctx.tenant, parent_path), (Condition("exists", TABLE.partition_key),)
        )
        try:
            await ctx.session.store.transact_write([parent_exists, put])
        except TransactionCanceled as exc:
            if exc.reasons and exc.reasons[0].code == CONDITION_FAILED:
                raise NotFound(f"no OrgNode with id {input.parent_id!r}") from exc
            raise
        return OrgNode.from_record(record)

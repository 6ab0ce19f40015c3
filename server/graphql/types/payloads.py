"""Inputs and payloads shared by the delete mutations of every type, and their one shape."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

import strawberry

from keygraph.store import Session
from server.authz import require
from server.errors import NotFound
from server.graphql.context import Info
from server.graphql.types.node import lookup_id

Deleting = Callable[[Session, str, str, int], Awaitable[bool | None]]
"""A domain delete: (session, tenant, local id, expected version) to whether its cleanup is
done (None: it has none)."""


@strawberry.input(description="What to delete, checked against the version last read.")
class DeleteInput:
    id: strawberry.ID
    expected_version: int


@strawberry.type(description="What a delete removed.")
class DeletePayload:
    deleted_id: strawberry.ID
    complete: bool = strawberry.field(
        description="False while a large delete's cleanup still removes what the object "
        "owned; the object itself is gone either way."
    )


def local_id_of(global_id: str, type_name: str) -> str:
    """The local id of a global id of `type_name`; NOT_FOUND for any other."""
    local = lookup_id(global_id, type_name)
    if local is None:
        raise NotFound(f"no {type_name} with id {global_id!r}")
    return local


async def delete(
    info: Info,
    input: DeleteInput,
    type_name: str,
    may: Callable[..., bool],
    action: str,
    write: Deleting,
    owner: str | None = None,
) -> DeletePayload:
    """Deletes the object of `type_name` that `input` names once the guard `may` allows it,
    given the caller (and the local id as `owner`, for a guard that asks whose it is):
    NOT_FOUND for another type's id, FORBIDDEN when refused."""
    ctx = info.context
    local = local_id_of(input.id, type_name)
    require(may(ctx.caller, **({} if owner is None else {owner: local})), action)
    complete = await write(ctx.server_session, ctx.tenant, local, input.expected_version)
    return DeletePayload(deleted_id=input.id, complete=complete is not False)

"""Inputs and payloads shared by the delete mutations of every type."""

from __future__ import annotations

import strawberry

from server.errors import NotFound
from server.graphql.types.node import lookup_id


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

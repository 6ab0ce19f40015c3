"""What the extension's mutations share: a guard that reads an id first, the session a
write runs on once its guard allowed it, and the payload of a delete."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from keygraph.api import Extension
from keygraph.caller import Caller
from keygraph.store import Session

from .ids import local_of
from .refusals import as_api_errors

EXTENSION = Extension('''
"""What to delete, checked against the version last read."""
input DeleteInput {
  id: ID!
  expectedVersion: Int!
}

"""What a delete removed."""
type DeletePayload {
  deletedId: ID!
  """
  False while a large delete's cleanup still removes what the object owned; the object
  itself is gone either way.
  """
  complete: Boolean!
}
''')
Deleting = Callable[[Session, str, str, int], Awaitable[bool | None]]
"""A domain delete: (session, tenant, local id, expected version) to whether its cleanup is
done (None: it has none)."""


def by_id(
    type_name: str, may: Callable[..., bool], owner: str | None = None, at: str = "id"
) -> Callable[[Caller, dict[str, Any]], bool]:
    """A mutation's guard: the id at `input[at]` must name a `type_name` (NOT_FOUND before
    FORBIDDEN), then `may` decides, given the caller (and the id's local part as `owner`,
    for a rule that asks whose it is)."""

    def guard(caller: Caller, input: dict[str, Any]) -> bool:
        local = local_of(input[at], type_name)
        return may(caller, **({} if owner is None else {owner: local}))

    return guard


def writer(info: Any) -> Session:
    """The session a mutation writes on once its guard allowed the caller: the domain's
    writes touch items (claims, counts, copies) no caller reads."""
    session: Session = info.context.session
    return Session(session.store, session.cursors)


async def deleted(
    info: Any, input: dict[str, Any], type_name: str, write: Deleting
) -> dict[str, Any]:
    """Deletes the item of `type_name` that `input` names: its DeletePayload."""
    local = local_of(input["id"], type_name)
    with as_api_errors():
        complete = await write(writer(info), info.context.tenant, local, input["expected_version"])
    return {"deleted_id": input["id"], "complete": complete is not False}

"""Which guard each GraphQL field that reads a pattern asks, by its arguments and the user it
belongs to: the resolvers ask them before reading, and the cost estimate counts only what
they allow (server/graphql/cost.py)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from enum import Enum
from typing import Any

from generated import authz
from keygraph.caller import Caller


def may_read_orders(
    caller: Caller, user_id: str, from_: datetime | None, to: datetime | None
) -> bool:
    """Whether the caller may run the pattern `User.orders` reads with these arguments."""
    if from_ is None and to is None:
        return authz.may_run_user_orders(caller, user_id=user_id)
    return authz.may_run_user_orders_between(caller, user_id=user_id)


FieldGuard = Callable[[Caller, Mapping[str, Any], str], bool]
"""Whether the caller may read a field, from its arguments and the id of the user the field
belongs to ("" for a field of no user)."""


def _caller_only(guard: Callable[[Caller], bool]) -> FieldGuard:
    return lambda caller, _args, _user: guard(caller)


FIELD_GUARDS: dict[tuple[str, str], FieldGuard] = {
    ("Query", "user"): _caller_only(authz.may_run_get_user),
    ("Query", "userByEmail"): _caller_only(authz.may_run_get_email_claim),
    ("Query", "users"): _caller_only(authz.may_run_list_users),
    ("Query", "order"): _caller_only(authz.may_run_get_order),
    ("Query", "ordersByStatus"): _caller_only(authz.may_run_orders_by_status),
    ("Query", "group"): _caller_only(authz.may_run_get_group),
    ("Query", "orgNode"): _caller_only(authz.may_run_get_org_nodes),
    ("Query", "orgRoots"): _caller_only(authz.may_run_org_children),
    ("Query", "shop"): _caller_only(authz.may_run_get_shops),
    ("Query", "shopsNear"): _caller_only(authz.may_run_shops_in_cell),
    ("User", "orders"): lambda caller, args, user: may_read_orders(
        caller, user, args.get("from"), args.get("to")
    ),
    ("User", "addresses"): lambda caller, _args, user: authz.may_run_user_with_addresses(
        caller, user_id=user
    ),
    ("User", "defaultAddress"): lambda caller, _args, user: (
        authz.may_read_user_default_address_id(caller, user_id=user)
        and authz.may_run_user_with_addresses(caller, user_id=user)
    ),
    ("User", "groups"): _caller_only(authz.may_run_user_groups),
    ("Group", "members"): _caller_only(authz.may_run_group_members),
    ("OrgNode", "children"): _caller_only(authz.may_run_org_children),
    ("OrgNode", "descendants"): _caller_only(authz.may_run_org_subtree),
    ("OrgNode", "ancestors"): _caller_only(authz.may_run_get_org_nodes),
    ("OrgNode", "parent"): _caller_only(authz.may_run_get_org_nodes),
    ("Order", "user"): _caller_only(authz.may_run_get_users),
}
"""The guard of each field that reads a pattern, by (type, field); the schema's assembly
fails for such a field with none here nor in UNGUARDED (server/graphql/tables.py)."""

UNGUARDED: Mapping[tuple[str, str], str] = {
    ("Query", "node"): "its resolver asks the guard of the type the id names",
    ("Query", "viewer"): "reads no pattern: the caller, from its token",
}
"""The root fields of objects that ask no guard here, and why."""


class Decision(Enum):
    YES = "yes"
    NO = "no"
    OWN = "own"
    """Only on the caller's own user."""


def decide(
    caller: Caller, where: tuple[str, str], args: Mapping[str, Any], user: str | None
) -> Decision:
    """Whether the caller may read the field `where` (type, field) with `args`, on the user
    `user` (None: a user not known before the read)."""
    guard = FIELD_GUARDS.get(where)
    if guard is None:
        return Decision.YES
    if user is not None:
        return Decision.YES if guard(caller, args, user) else Decision.NO
    own = caller.subject is not None and guard(caller, args, caller.subject)
    other = guard(caller, args, _other_than(caller.subject))
    if other:
        return Decision.YES
    return Decision.OWN if own else Decision.NO


def _other_than(subject: str | None) -> str:
    """A user id that is not `subject`."""
    return "\x00" if subject != "\x00" else "\x00\x00"


def unrestricted(caller: Caller) -> bool:
    """Whether the caller may read every field, whoever it belongs to (an admin)."""
    return all(decide(caller, where, {}, None) is Decision.YES for where in FIELD_GUARDS)

"""The guards of GraphQL fields that read one of several patterns by their arguments."""

from __future__ import annotations

from datetime import datetime

from generated import authz
from keygraph.caller import Caller


def may_read_orders(
    caller: Caller, user_id: str, from_: datetime | None, to: datetime | None
) -> bool:
    """Whether the caller may run the pattern `User.orders` reads with these arguments."""
    if from_ is None and to is None:
        return authz.may_run_user_orders(caller, user_id=user_id)
    return authz.may_run_user_orders_between(caller, user_id=user_id)

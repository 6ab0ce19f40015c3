"""Sending a transaction and turning a cancellation into the client's error."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from keygraph.errors import TransactionCanceled
from keygraph.plan import Condition, WriteAction
from keygraph.store import Store
from server.errors import ApiError, Conflict

ABSENT = (Condition(op="not_exists", attribute="PK"),)
"""A put that must not overwrite anything."""

PRESENT = (Condition(op="exists", attribute="PK"),)
"""A check that the item exists."""

CONDITION_FAILED = "ConditionalCheckFailed"


MAX_ACTIONS = 100
"""The most actions one DynamoDB transaction takes."""


def version_is(version: int) -> tuple[Condition, ...]:
    return (Condition(op="equals", attribute="version", value=version),)


def stale(what: str, current: int, expected: int) -> Conflict:
    """The error of a change made against a version that is no longer current."""
    return Conflict(f"the {what} is at version {current}, not {expected}", currentVersion=current)


async def write_in_chunks(store: Store, actions: Sequence[WriteAction]) -> None:
    """Write unconditional, idempotent actions (a cleanup's deletes) in transactions of at
    most MAX_ACTIONS: each chunk lands whole or not at all, and can be written again."""
    for start in range(0, len(actions), MAX_ACTIONS):
        await store.transact_write(actions[start : start + MAX_ACTIONS])


async def transact(
    store: Store,
    actions: Sequence[WriteAction],
    failures: Mapping[int, ApiError | None],
) -> None:
    """Write `actions` in one transaction. When it is cancelled because the condition of
    action i failed, raise failures[i] (the first such action in order wins); a None entry
    means that failure is acceptable and the transaction's outcome is fine as it is."""
    try:
        await store.transact_write(actions)
    except TransactionCanceled as exc:
        failed = [i for i, reason in enumerate(exc.reasons) if reason.code == CONDITION_FAILED]
        for index in failed:
            error = failures.get(index)
            if error is not None:
                raise error from exc
        if failed and all(index in failures for index in failed):
            return
        raise Conflict("a concurrent write got in the way; try again") from exc

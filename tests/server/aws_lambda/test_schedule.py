"""The cleanups on Lambda: a deleteUser the HTTP function cannot finish inline leaves its
task pending and nothing running, and the scheduled function (server.aws_lambda.schedule)
takes it up, page by page, until the invocation's time less its margin runs out, leaving
the rest to the next run."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from generated.models.cleanup_task import CleanupTask
from generated.models.enums import CleanupTaskKind
from keygraph.cursor import CursorCodec
from keygraph.plan import Query
from keygraph.store import Session
from server.aws_lambda import environment, schedule
from server.domain import cleanup
from server.domain.tx import MAX_ACTIONS
from tests.ids import local_id
from tests.server.aws_lambda.conftest import post

pytestmark = pytest.mark.dynamodb_local

ORDERS = MAX_ACTIONS // 2 + 1
"""A user's orders that one page of its cleanup does not take all of."""
SCHEDULED = {
    "version": "0",
    "id": "53dc4d37-cffa-4f76-80c9-8b7d4a4d2eaa",
    "detail-type": "Scheduled Event",
    "source": "aws.events",
    "account": "123456789012",
    "time": "2026-11-28T12:00:00Z",
    "region": "eu-west-1",
    "resources": ["arn:aws:events:eu-west-1:123456789012:rule/keygraph-cleanups"],
    "detail": {},
}
USER = "mutation($i: CreateUserInput!) { createUser(input: $i) { id } }"
ORDER = "mutation($i: CreateOrderInput!) { createOrder(input: $i) { id } }"
DELETE = "mutation($i: DeleteInput!) { deleteUser(input: $i) { deletedId complete } }"


class Context:
    """A Lambda context whose remaining time runs down with the clock, or all at once."""

    def __init__(self, seconds: float) -> None:
        self.end = time.monotonic() + seconds

    def get_remaining_time_in_millis(self) -> int:
        return max(0, round((self.end - time.monotonic()) * 1000))

    def run_out(self) -> None:
        self.end = time.monotonic()


def heavy_user(email: str) -> str:
    """A user of acme with ORDERS orders; its id."""
    user_id: str = post(USER, {"i": {"email": email, "name": "Heavy"}}, "acme")["createUser"]["id"]
    item = {"sku": "S", "name": "S item", "quantity": 1, "unitPriceCents": 1}
    for _ in range(ORDERS):
        post(ORDER, {"i": {"userId": user_id, "currency": "EUR", "items": [item]}}, "acme")
    return user_id


def run(work: Any) -> Any:
    return environment.loop().run_until_complete(work)


def left_of(user_id: str) -> int:
    """Items of the user's partition still in the table."""
    pk = f"T#acme#USER#{local_id(user_id, 'User')}"
    return len(run(environment.store().query(Query(pk, consistent=True, limit=1000))).items)


def pending() -> list[CleanupTask]:
    session = Session(environment.store(), CursorCodec(environment.settings().cursor_key()))
    tasks: list[CleanupTask] = run(cleanup.pending(session))
    return tasks


def test_the_schedule_finishes_what_a_request_left(
    deployed: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    users = [heavy_user("ann@example.org"), heavy_user("bob@example.org")]
    monkeypatch.setattr(cleanup, "INLINE_SECONDS", 0.0)  # one page inline, then answer
    for user_id in users:
        variables = {"i": {"id": user_id, "expectedVersion": 1}}
        assert post(DELETE, variables, "acme")["deleteUser"] == {
            "deletedId": user_id,
            "complete": False,
        }
        assert asyncio.all_tasks(environment.loop()) == set()  # nothing goes on after it
    assert all(left_of(user_id) > 0 for user_id in users)
    assert [task.kind for task in pending()] == [CleanupTaskKind.USER] * 2

    short = Context(schedule.MARGIN_SECONDS / 2)  # less than the margin: no page starts
    assert schedule.handler(SCHEDULED, short) == {"done": 0, "left": 2}

    runner = cleanup._RUNNERS[CleanupTaskKind.USER]
    context = Context(schedule.MARGIN_SECONDS + 60)

    async def the_last_page(s: Session, task: CleanupTask) -> bool:
        try:
            return await runner(s, task)
        finally:
            context.run_out()

    with monkeypatch.context() as patched:
        patched.setitem(cleanup._RUNNERS, CleanupTaskKind.USER, the_last_page)
        assert schedule.handler(SCHEDULED, context) == {"done": 1, "left": 1}
    assert sorted(left_of(user_id) > 0 for user_id in users) == [False, True]
    assert len(pending()) == 1

    assert schedule.handler(SCHEDULED, Context(schedule.MARGIN_SECONDS + 60)) == {
        "done": 1,
        "left": 0,
    }
    assert [left_of(user_id) for user_id in users] == [0, 0]
    assert pending() == []

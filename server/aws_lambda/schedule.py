"""The cleanups `serve` runs in its background, as a Lambda function an EventBridge schedule
invokes: each run takes up the pending tasks (server/domain/cleanup.py) and works on them
until the invocation's remaining time, less MARGIN_SECONDS, runs out, then returns how many
it finished and how many it left for the next run."""

from __future__ import annotations

import logging
from typing import Any, Protocol

from keygraph.cursor import CursorCodec
from keygraph.store import Session
from server.aws_lambda import environment
from server.domain import cleanup

log = logging.getLogger("keygraph.cleanup")

MARGIN_SECONDS = 3.0
"""Left of the invocation's time when the last page starts: the longest page (a read and a
transaction of 100 deletes) with room to answer."""


class LambdaContext(Protocol):
    def get_remaining_time_in_millis(self) -> int: ...


def handler(event: dict[str, Any], context: LambdaContext) -> dict[str, int]:
    """Works on pending cleanups while the invocation has time; the event (a scheduled
    event) says nothing more. Returns {"done": tasks finished, "left": tasks still pending}."""

    def time_left() -> float:
        return context.get_remaining_time_in_millis() / 1000 - MARGIN_SECONDS

    settings = environment.settings()
    session = Session(environment.store(), CursorCodec(settings.cursor_key()))
    done, left = environment.loop().run_until_complete(cleanup.work_until(session, time_left))
    log.info("scheduled cleanup: %d tasks done, %d left", done, left)
    return {"done": done, "left": left}

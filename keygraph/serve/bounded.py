"""`keygraph serve`'s deadline on each /graphql request over HTTP (deadlines.py): a request
still running Served.request_timeout seconds after it came in (or when the time its platform
leaves it runs out: Served.time_left, Lambda's) is cancelled and answered 504 TIMEOUT, so a
slow store or a costly operation cannot hold the process.

Cancelling leaves nothing half-written: each write is one transaction, which lands whole or
not at all, though one sent before the cut may still land. A request that failed or was cut
with its Idempotency-Key claimed gives its claim up (idempotency.py): forgotten when it wrote
nothing, so the retry runs; kept as outcome unknown when a write may have landed, so the
retry does not apply it twice."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable

from starlette.requests import Request
from starlette.responses import Response

from keygraph import deadline as work_deadline

from .answer import refused
from .deadlines import Deadlines
from .idempotency import Claimed, Ledger
from .learnt import Learnt
from .served import Served

log = logging.getLogger("keygraph.idempotency")

SETTLE_SECONDS = 0.5
"""How long a cut request waits for its key's record to be given up before it answers: on a
store that answers, a retry sent at once finds the record settled."""


class Bounded:
    """Runs each request within its deadline; one deadline sweep for the app."""

    def __init__(self, served: Served) -> None:
        self.served = served
        self.deadlines = Deadlines(served.request_timeout)
        self._settling: set[asyncio.Task[None]] = set()

    async def answer(
        self, request: Request, learnt: Learnt, answer: Callable[[], Awaitable[Response]]
    ) -> Response:
        """The response `answer` makes, or 504 TIMEOUT once the request's time is up."""
        timeout = self._timeout(request)
        deadline = self.deadlines.deadline(timeout)
        try:
            with deadline:
                return await answer()
        except BaseException as exc:
            settling = self._give_up(learnt)
            if not (isinstance(exc, TimeoutError) and deadline.expired()):
                raise
        if settling is not None:
            await asyncio.wait({settling}, timeout=SETTLE_SECONDS)
        message = f"the request took longer than {timeout:g} s and was cancelled"
        cut = refused(504, "TIMEOUT", message)
        cut.operation = learnt.operation
        return cut

    def _timeout(self, request: Request) -> float:
        """Seconds the request may run: the app's timeout, or less when its platform
        leaves it less."""
        timeout = self.served.request_timeout
        left = None if self.served.time_left is None else self.served.time_left(request.scope)
        return timeout if left is None else max(0.0, min(timeout, left))

    def _give_up(self, learnt: Learnt) -> asyncio.Task[None] | None:
        """Gives up the request's claim, if it holds one, in a task of its own (the request
        is cancelled, and its store may be the one that stalls)."""
        claim, ledger = learnt.claim, self.served.ledger
        if claim is None or ledger is None:
            return None
        learnt.claim = None
        work = _fail(ledger, claim, learnt.maybe_applied)
        settling = asyncio.ensure_future(work_deadline.unbounded(work))
        self._settling.add(settling)
        settling.add_done_callback(self._settling.discard)
        return settling


async def _fail(ledger: Ledger, claim: Claimed, maybe_applied: bool) -> None:
    try:
        await ledger.fail(claim, maybe_applied)
    except Exception:
        log.warning(
            "the Idempotency-Key record %s was not given up; it is taken over after its window",
            claim.key,
            exc_info=True,
        )

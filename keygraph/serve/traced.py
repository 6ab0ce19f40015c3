"""`keygraph serve`'s trace of each /graphql request over HTTP (tracing.py), when tracing
is on: the request's span, its store calls counted into waves by a store view of its own
(keygraph.stores.counting) over the app's observed store (observed_store.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from opentelemetry import trace
from starlette.requests import Request
from starlette.responses import Response

from keygraph.store import Store
from keygraph.stores.counting import CountingStore

from .answer import operation_name, outcome
from .tracing import RequestTrace


class Traced:
    """Traces each request it is given with `tracer`."""

    def __init__(self, tracer: trace.Tracer, store: Store) -> None:
        self.tracer = tracer
        self.store = store
        """The app's store, observed: each request's counted view reads through it."""

    async def answer(
        self, request: Request, answer: Callable[[Store], Awaitable[Response]]
    ) -> Response:
        """The response `answer` makes on the store it is given, the request traced: its
        calls counted into waves when its trace is kept."""
        counter = CountingStore(self.store)
        began = RequestTrace.begin(
            self.tracer,
            request.headers.raw,
            request.method,
            request.url.path,
            lambda: counter.current_wave,
        )
        response: Response | None = None
        try:
            response = await answer(counter if began.recording else self.store)
            return response
        except Exception as exc:
            if began.recording:
                began.request.record_exception(exc)
            raise
        finally:
            status, code, operation = outcome(response)
            calls = {"keygraph.store_calls": counter.calls} if began.recording else None
            began.end(status, code, operation_name(operation), calls)

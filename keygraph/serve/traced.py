"""`keygraph serve`'s trace of each /graphql request over HTTP (tracing.py), when tracing
is on: the request's span, with its request id, tenant and capacity units, its store calls
counted into waves by the request's store view (keygraph.stores.counting, learnt.py) over
the app's observed store (observed_store.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from opentelemetry import trace
from opentelemetry.util.types import AttributeValue
from starlette.requests import Request
from starlette.responses import Response

from .answer import operation_name, outcome
from .learnt import Learnt
from .tracing import RequestTrace


class Traced:
    """Traces each request it is given with `tracer`."""

    def __init__(self, tracer: trace.Tracer) -> None:
        self.tracer = tracer

    async def answer(
        self, request: Request, learnt: Learnt, answer: Callable[[], Awaitable[Response]]
    ) -> Response:
        """The response `answer` makes, the request traced: its calls, made through its
        counted store, counted into waves when its trace is kept."""
        counter = learnt.store
        began = RequestTrace.begin(
            self.tracer,
            request.headers.raw,
            request.method,
            request.url.path,
            lambda: counter.current_wave,
        )
        response: Response | None = None
        try:
            response = await answer()
            return response
        except Exception as exc:
            if began.recording:
                began.request.record_exception(exc)
            raise
        finally:
            status, code, operation = outcome(response)
            more = _learnt(learnt) if began.recording else None
            began.end(status, code, operation_name(operation or learnt.operation), more)


def _learnt(learnt: Learnt) -> dict[str, AttributeValue]:
    """What the app learnt about a request, as its span's attributes."""
    more: dict[str, AttributeValue] = {
        "keygraph.request_id": learnt.request_id,
        "keygraph.store_calls": learnt.store.calls,
    }
    if learnt.tenant is not None:
        more["keygraph.tenant"] = learnt.tenant
    if learnt.meter is not None:
        more["keygraph.read_units"] = learnt.meter.read_units
        more["keygraph.write_units"] = learnt.meter.write_units
    return more

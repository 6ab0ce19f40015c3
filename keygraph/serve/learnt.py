"""What `keygraph serve` learns about one /graphql request over HTTP on its way, for its line
in the request log (request_log.py) and for its deadline (bounded.py): its id, the store it
runs on (counting its calls and waves), the tenant its token names, the operation admitted,
and its Idempotency-Key's claim while one is made or held."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from graphql import OperationDefinitionNode
from starlette.requests import Request
from starlette.responses import Response

from keygraph import capacity
from keygraph.store import Store
from keygraph.stores.counting import CountingStore

from .answer import operation_name, outcome
from .idempotency import Claimed
from .request_log import REQUEST_ID_HEADER, log_request, request_id
from .written import Written


@dataclass(slots=True)
class Learnt:
    """One request, as far as it went."""

    request_id: str
    store: CountingStore
    """The app's store, the request's calls counted (its trace's waves too: traced.py)."""
    tenant: str | None = None
    operation: OperationDefinitionNode | None = None
    claim: Claimed | None = None
    """The Idempotency-Key's claim, from before it is made until the record is settled."""
    written: Written | None = None
    """The store a claimed mutation runs on, noting whether it may have written."""
    meter: capacity.Meter | None = None
    """The capacity units the request's store calls have used, while it is answered."""

    @classmethod
    def of(cls, request: Request, store: Store) -> Learnt:
        """A request that came in, to run on `store`."""
        return cls(request_id(request.headers.get(REQUEST_ID_HEADER)), CountingStore(store))

    @property
    def maybe_applied(self) -> bool:
        """Whether the request may have written."""
        return self.written is not None and self.written.maybe_applied

    async def logged(self, answer: Callable[[], Awaitable[Response]]) -> Response:
        """The response `answer` makes, with the request's X-Request-Id; the request's line
        logged, its capacity units metered."""
        started = time.perf_counter()
        response: Response | None = None
        with capacity.metering() as meter:
            self.meter = meter
            try:
                response = await answer()
            finally:
                status, code, operation = outcome(response)
                log_request(
                    request_id=self.request_id,
                    tenant=self.tenant,
                    operation=operation_name(operation or self.operation),
                    status=status,
                    code=code,
                    store_calls=self.store.calls,
                    store_waves=self.store.waves,
                    read_units=meter.read_units,
                    write_units=meter.write_units,
                    started=started,
                )
        response.headers[REQUEST_ID_HEADER] = self.request_id
        return response

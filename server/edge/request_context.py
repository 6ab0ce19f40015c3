"""The per-request context of a verified request, the same on both execution paths: the
caller's tenant and sessions over the store (through the Idempotency-Key's tokens when the
request has one, whose claim it asks for before the operation runs), counted, with the
caller's own cursor codec."""

from __future__ import annotations

from keygraph.cursor import CursorCodec
from keygraph.serve.budget import Budget
from keygraph.store import Session, Store
from keygraph.stores.counting import CountingStore
from server.edge import idempotency
from server.edge.request import GraphQLRequest
from server.graphql.context import RequestContext

_CALLERS_REMEMBERED = 4096
"""Callers whose cursor codec is kept (one HMAC each to derive)."""


class RequestContexts:
    """Builds each request's context over one store, cursor key and budget."""

    def __init__(
        self, store: Store, cursors: CursorCodec, budget: Budget, *, dev: bool, batching: bool
    ) -> None:
        self.store = store
        self.cursors = cursors
        self._caller_cursors: dict[str | None, CursorCodec] = {}
        self.budget = budget
        self.dev = dev
        self.batching = batching

    def build(self, request: GraphQLRequest) -> RequestContext:
        """The context of `request`, kept on it as `request.ctx`."""
        claims = request.claims
        if claims is None:
            raise RuntimeError("a GraphQL context is built only for a verified request")
        keyed = request.keyed
        store = (
            self.store
            if keyed is None
            else idempotency.TokenedStore(self.store, claims.tenant, keyed.name, keyed.writes)
        )
        counter = CountingStore(store)
        cursors = self._cursors_of(claims.subject)
        ctx = RequestContext(
            tenant=claims.tenant,
            caller=claims.caller,
            unrestricted=claims.unrestricted,
            session=Session(counter, cursors, claims.caller),
            server_session=Session(counter, cursors),
            request_id=request.request_id,
            dev=self.dev,
            batching=self.batching,
            counter=counter,
            budget=self.budget,
            document_cache=request.document_cache,
        )
        if keyed is not None:
            ctx.before_run = keyed.before_run
        request.ctx = ctx
        return ctx

    def _cursors_of(self, subject: str | None) -> CursorCodec:
        """The cursor codec of one caller: its cursors are its own (cursor.py)."""
        codec = self._caller_cursors.get(subject)
        if codec is None:
            if len(self._caller_cursors) >= _CALLERS_REMEMBERED:
                self._caller_cursors.clear()
            codec = self._caller_cursors[subject] = self.cursors.bound_to(subject)
        return codec

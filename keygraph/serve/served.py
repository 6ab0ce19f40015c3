"""What `keygraph serve` answers with, and its limits (their defaults: limits.py): the
package's schema and store, how tokens are checked, the cursors' key, the tenant budget,
the request deadline, GraphiQL, persisted documents, metrics and traces."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphql import GraphQLSchema

from keygraph.api.cost import Estimates
from keygraph.api.watches import Realtime
from keygraph.cursor import CursorCodec
from keygraph.plan import TableDef
from keygraph.store import Session, Store
from keygraph.stores.view import Planned
from keygraph.tokens import TokenKey, Verified, Verifier
from keygraph.writes import Writes

from .budget import Budget
from .document_cache import DOCUMENT_CHARS_KEPT, DOCUMENTS_KEPT, DocumentCache
from .idempotency import Ledger
from .limits import (
    MAX_ALIASES,
    MAX_BODY_BYTES,
    MAX_COST,
    MAX_DEPTH,
    MAX_DOCUMENT,
    MAX_FIELDS,
    MAX_IN_FLIGHT,
    MAX_PAIRS,
    MAX_QUERY_STRING,
    MAX_TOKENS,
    MAX_VARIABLE_VALUES,
    PART_OBJECTS,
    STREAM_COST,
)
from .persisted import Documents
from .request_settings import REQUEST_TIMEOUT
from .subscription_settings import SubscriptionSettings

if TYPE_CHECKING:
    from opentelemetry.sdk.trace import TracerProvider

MEDIA = "application/graphql-response+json"
MAX_ROOT_FIELDS = 30
"""Root fields an operation selects, aliases and fragments counted: each is a read of its own,
whatever it costs."""
MAX_SUBSCRIPTIONS = 20
INIT_SECONDS = 10.0
"""Seconds a WebSocket connection has to send its `connection_init`."""
MAX_CONNECTIONS = 200
SWEEP_EVERY = 5.0
"""Seconds between two sweeps of the tasks deletes leave (a sweep with none is one Query)."""


@dataclass(frozen=True, slots=True)
class Served:
    """What the app answers with: the package's schema, its store, how tokens are checked,
    the key cursors are signed with, and the limits."""

    schema: GraphQLSchema
    store: Store
    tokens: TokenKey
    cursors: CursorCodec
    max_body_bytes: int = MAX_BODY_BYTES
    max_document: int = MAX_DOCUMENT
    max_tokens: int = MAX_TOKENS
    max_depth: int = MAX_DEPTH
    max_aliases: int = MAX_ALIASES
    max_fields: int = MAX_FIELDS
    max_pairs: int = MAX_PAIRS
    max_root_fields: int = MAX_ROOT_FIELDS
    max_variable_values: int = MAX_VARIABLE_VALUES
    max_cost: int = MAX_COST
    """The most items an operation's answer may hold (keygraph.api.cost). Each limit's
    default is declared in limits.py, the repository's server's too."""
    stream_cost: int = STREAM_COST
    """A query whose answer may hold more objects than this is read and sent in parts of
    about `part_objects` objects (parted.py): its memory stays near its size in bytes."""
    part_objects: int = PART_OBJECTS
    max_query_string: int = MAX_QUERY_STRING
    max_in_flight: int = MAX_IN_FLIGHT
    """Requests over HTTP this app runs at once; more are shed (shedding.py)."""
    compiled: bool = True
    """Operations run compiled (keygraph/execution); False: on graphql-core's executor."""
    budget: Budget | None = None
    """Each tenant's bucket of cost points, the worker's own or one shared through Redis
    (keygraph/shared/bucket.py); None: no budget."""
    graphiql: bool = True
    dev: bool = False
    """Development mode: answers report their store calls and waves and how their document
    was found in `extensions` (reported.py)."""
    dev_authorization: Callable[[], str] | None = None
    """A fresh Authorization header for GraphiQL's page (development only)."""
    realtime: Realtime | None = None
    """The change stream's hub and cursors, when the API has subscriptions and the store a
    stream (the app starts and stops it)."""
    max_subscriptions: int = MAX_SUBSCRIPTIONS
    """Subscriptions one WebSocket connection may hold at once."""
    subscriptions: SubscriptionSettings = field(default_factory=SubscriptionSettings)
    """Subscriptions one tenant, and all of them, may hold at once in the process
    (subscription_limits.py)."""
    max_connections: int = MAX_CONNECTIONS
    """WebSocket connections one tenant may hold at once in the process."""
    init_timeout: float = INIT_SECONDS
    """Seconds a WebSocket connection has to send `connection_init`, else closed 4408."""
    ledger: Ledger | None = None
    """Where Idempotency-Key's records are kept; None: the header is not honoured."""
    table: TableDef | None = None
    """The store's table: a request answers a get of an item it read before from what it
    read (keygraph/api/remembered.py); None: every read is the store's."""
    request_timeout: float = REQUEST_TIMEOUT
    """Seconds a request over HTTP may run before it is cut: 504 TIMEOUT (bounded.py)."""
    time_left: Callable[[Mapping[str, Any]], float | None] | None = None
    """The seconds the platform leaves a request, from its ASGI scope, when less than
    `request_timeout` bounds it (Lambda's invocation: lambda_handler.py); None: none."""
    verifier: Verifier[Verified] = field(init=False, compare=False, repr=False)
    """Checks tokens with `tokens`, remembering each verified one until it expires."""
    documents: DocumentCache = field(
        default_factory=lambda: DocumentCache(DOCUMENTS_KEPT, DOCUMENT_CHARS_KEPT),
        compare=False,
        repr=False,
    )
    """The documents parsed and validated, by text and by shape (literals.py): a text sent
    again, or one differing from a kept one only in its literals, skips the lexer, the
    parser and validation. Only those that passed are kept (document_cache.py)."""
    estimates: Estimates = field(default_factory=Estimates, compare=False, repr=False)
    """The operations' costs, remembered per document and the variables a cost depends on."""
    persisted: Documents = field(default_factory=Documents, compare=False, repr=False)
    """The documents known by their sha256: those clients registered (automatic persisted
    queries), or a manifest's trusted documents, the only ones then run (persisted.py)."""
    metered: bool = False
    """Whether requests and store calls are recorded in Prometheus metrics (observed.py)."""
    metrics_token: str | None = None
    """Serves /metrics on the app's port to requests bearing this token; None: not there."""
    tracer_provider: TracerProvider | None = None
    """Where each /graphql request's spans over HTTP go (tracing.py): the trace settings'
    provider (trace_provider.py), shut down when the app stops; None: no traces, and no
    OpenTelemetry loaded."""
    pattern_of: Callable[[str, Planned], str] | None = None
    """The access pattern a store call (its DynamoDB operation, its plan) serves, its
    metrics' and spans' `pattern` (patterns.py); None: `other`."""
    starting: tuple[Callable[[Session], Awaitable[None]], ...] = ()
    """Work the app does as it starts, before it serves (beside.py)."""
    closing: tuple[Callable[[], Awaitable[None]], ...] = ()
    """What the app awaits as it stops, after its hub (a shared budget's link to Redis)."""
    sweeps: Mapping[str, Writes] = field(default_factory=dict)
    """The package's writes when its deletes leave owned items to remove: the app then
    sweeps them (keygraph.writes.sweep) every SWEEP_EVERY seconds."""

    def __post_init__(self) -> None:
        if not self.request_timeout > 0:
            raise ValueError(f"request_timeout must be positive, not {self.request_timeout}")
        if not self.init_timeout > 0:
            raise ValueError(f"init_timeout must be positive, not {self.init_timeout}")
        self.subscriptions.check_subscriptions()
        object.__setattr__(self, "verifier", Verifier(self.tokens, _itself))


def _itself(verified: Verified) -> Verified:
    return verified

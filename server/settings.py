"""Server settings: defaults, then KEYGRAPH_* environment variables, then explicit overrides.

Dev mode needs no configuration: with no JWT secret set, a random one is created once and kept
in the data directory, so tokens survive restarts, and GraphiQL comes with an admin token of
it. Dev mode is what an unset KEYGRAPH_ENV means only while no secret or public key is
configured: with one, the server is in production mode unless KEYGRAPH_ENV=dev asks for dev
mode, so a real secret never signs a token for whoever opens the page. Production mode
refuses to start without a configured secret or public key, and turns GraphiQL off unless
asked for (KEYGRAPH_GRAPHIQL=1 serves it with no token: the user pastes one).
"""

from __future__ import annotations

import hashlib
import hmac
import os
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any, Literal

from keygraph.serve import manifest
from keygraph.serve.budget import CAPACITY, REFILL_PER_SECOND
from keygraph.serve.document_cache import DOCUMENT_CHARS_KEPT, DOCUMENTS_KEPT
from keygraph.serve.environment import flag
from keygraph.serve.gc_tuning import GC_YOUNG_THRESHOLD
from keygraph.serve.limits import (
    MAX_ALIASES,
    MAX_BODY_BYTES,
    MAX_COST,
    MAX_DEPTH,
    MAX_DOCUMENT,
    MAX_FIELDS,
    MAX_PAIRS,
    MAX_TOKENS,
    MAX_VARIABLE_VALUES,
    PART_OBJECTS,
    STREAM_COST,
)
from keygraph.serve.reader_settings import ReaderSettings
from keygraph.serve.request_settings import REQUEST_VARIABLES, RequestSettings, request_values
from keygraph.serve.scale_settings import ScaleSettings
from keygraph.serve.subscription_settings import SubscriptionSettings
from keygraph.serve.trace_settings import TRACE_VARIABLES, TraceSettings, trace_values
from keygraph.stores.dynamodb.connections import IDLE_TIMEOUT
from keygraph.tokens import DEV_TENANT, dev_secret

StoreKind = Literal["embedded", "dynamodb", "dynamodb-local"]
STORE_KINDS: tuple[StoreKind, ...] = ("embedded", "dynamodb", "dynamodb-local")
ExecutorKind = Literal["compiled", "graphql-core"]
EXECUTOR_KINDS: tuple[ExecutorKind, ...] = ("compiled", "graphql-core")


class SettingsError(ValueError):
    """Settings that cannot work; the message says which and how to fix it."""


@dataclass(frozen=True)
class Limits(RequestSettings):
    """What one request may ask and one tenant may spend, checked before anything runs, with
    the defaults `keygraph serve` has too (keygraph/serve/limits.py); how long it may run is
    the runtime's (RequestSettings, read from the same variable by `keygraph serve`)."""

    max_depth: int = MAX_DEPTH
    max_aliases: int = MAX_ALIASES
    max_document: int = MAX_DOCUMENT
    """Characters of a GraphQL document (its lexer takes tens of milliseconds per 100,000)."""
    max_tokens: int = MAX_TOKENS
    max_fields: int = MAX_FIELDS
    """Fields one operation selects, a fragment's counted each time it is spread."""
    max_pairs: int = MAX_PAIRS
    """Pairs of fields under one response key at one place of the response, which validation
    compares two by two (about 30 ms at most here; a legitimate query makes a few dozen)."""
    max_variable_values: int = MAX_VARIABLE_VALUES
    """Values a request's variables hold: list items and object fields, at any depth."""
    max_cost: int = MAX_COST
    """The most objects one operation's response may hold (keygraph/api/cost.py)."""
    stream_cost: int = STREAM_COST
    """A query that may return more objects than this is read and sent in parts
    (keygraph/serve/parted.py), trading store waves for memory."""
    part_objects: int = PART_OBJECTS
    """Objects a part of such a response holds, about."""
    tenant_budget: int = CAPACITY
    """Cost points a tenant's bucket holds (keygraph/serve/budget.py), at least max_cost."""
    tenant_refill: float = REFILL_PER_SECOND
    """Cost points a tenant's bucket regains each second."""
    max_body_bytes: int = MAX_BODY_BYTES
    max_query_string: int = 8192
    """Bytes of a GET request's query string."""
    max_in_flight: int = 64
    """Requests a worker runs at once; more are refused with 503."""
    document_cache_entries: int = DOCUMENTS_KEPT
    """Prepared documents a worker keeps, by text or by shape (keygraph.serve.document_cache)."""
    document_cache_chars: int = DOCUMENT_CHARS_KEPT
    """Characters of document text those hold in all: their memory, about 20 KB per 100."""


@dataclass(frozen=True)
class Settings(TraceSettings, ScaleSettings, SubscriptionSettings, ReaderSettings):
    """Every setting of the server; those of its traces, its workers and its Redis URL, the
    subscriptions a tenant and a worker hold, and the elected stream reader's, are the
    runtime's (TraceSettings, ScaleSettings, SubscriptionSettings, ReaderSettings: read from
    the same variables by `keygraph serve`).
    With a Redis URL the server shares its places there too, and the change stream one
    elected reader appends to a Redis Stream every hub reads (keygraph/shared/); without it
    each host reads the change stream."""

    env: Literal["dev", "production"] | None = None
    """Unset: dev while no JWT secret or public key is configured, else production;
    resolved() sets it."""
    data_dir: Path = Path(".keygraph")
    store: StoreKind = "embedded"
    table: str = "keygraph"
    dynamodb_endpoint: str | None = None
    region: str = "us-east-1"
    dynamodb_idle_timeout: float = IDLE_TIMEOUT
    """Seconds a DynamoDB connection may wait idle and still be reused: keep it under the
    idle limit of the endpoint and of any proxy on the way (keygraph/stores/dynamodb/
    connections.py)."""
    jwt_secret: str | None = None
    jwt_public_key_file: Path | None = None
    cursor_secret: str | None = None
    graphiql: bool | None = None
    dev_tenant: str = DEV_TENANT
    """The tenant of the token GraphiQL is prefilled with in dev mode."""
    roles_claim: str = "roles"
    """The token claim holding the caller's roles (e.g. `cognito:groups`)."""
    default_roles: tuple[str, ...] = ("member",)
    """The roles of a token without the roles claim."""
    host: str = "127.0.0.1"
    port: int = 8000
    limits: Limits = field(default_factory=Limits)
    shutdown_timeout: float = 30.0
    """Seconds a stopping server waits for requests in flight before it closes them."""
    keep_alive: float = 75.0
    """Seconds an idle client connection stays open: longer than a load balancer's idle
    timeout (60 s on AWS), so that the balancer, not the server, closes it first."""
    trusted_documents: Path | None = None
    """A manifest of the only operations the server runs (keygraph/serve/manifest.py)."""
    executor: ExecutorKind = "compiled"
    """How operations run: compiled into plans (keygraph/execution), or by graphql-core's
    executor; the answers are the same."""
    ws_init_timeout: float = 10.0
    """Seconds a WebSocket client has to send `connection_init` (keygraph/serve/sockets.py)."""
    max_subscriptions_per_connection: int = 32
    max_ws_connections_per_tenant: int = 1_000
    """WebSocket connections of one tenant a worker holds once initialised: past it a new
    one is closed 4429, so no tenant takes every place of a worker."""
    stream_poll_interval: float | None = None
    """Seconds the change stream's reader waits when a read found nothing new; by default
    0.01 on the embedded store (a poll of its change log that finds nothing costs about
    10 µs) and 0.25 on DynamoDB (Streams allows five GetRecords a second per shard)."""
    metrics_token: str | None = None
    """Serves /metrics on the app's port to requests bearing this token."""
    metrics_port: int | None = None
    """Serves /metrics on this port of `metrics_host`, without a token."""
    metrics_host: str = "127.0.0.1"
    gc_young_threshold: int = GC_YOUNG_THRESHOLD
    """Allocations between collections of the young generation in a serving process
    (keygraph/serve/gc_tuning.py)."""

    @property
    def poll_interval(self) -> float:
        """The change stream reader's poll interval, as set or by the store's default."""
        if self.stream_poll_interval is not None:
            return self.stream_poll_interval
        return 0.01 if self.store == "embedded" else 0.25

    @property
    def dev(self) -> bool:
        """Dev mode: GraphiQL and `serve` hand out admin tokens, answers report store calls."""
        if self.env is None:
            return not self.jwt_secret and self.jwt_public_key_file is None
        return self.env == "dev"

    @property
    def metrics_enabled(self) -> bool:
        return self.metrics_token is not None or self.metrics_port is not None

    @property
    def graphiql_enabled(self) -> bool:
        return self.dev if self.graphiql is None else self.graphiql

    @property
    def embedded_path(self) -> Path:
        return self.data_dir / "keygraph.sqlite3"

    @property
    def jwt_algorithm(self) -> Literal["HS256", "RS256"]:
        return "RS256" if self.jwt_public_key_file is not None else "HS256"

    def cursor_key(self) -> bytes:
        """The cursor HMAC key: the configured one, else derived from the JWT secret."""
        if self.cursor_secret:
            return self.cursor_secret.encode()
        if self.jwt_secret is None:
            raise SettingsError("set KEYGRAPH_CURSOR_SECRET (needed with an RS256 public key)")
        return hmac.new(self.jwt_secret.encode(), b"keygraph cursors", hashlib.sha256).digest()

    def resolved(self) -> Settings:
        """Checked settings with every secret in place; SettingsError when they cannot work."""
        if self.env not in (None, "dev", "production"):
            raise SettingsError(f"KEYGRAPH_ENV must be dev or production, not {self.env!r}")
        if self.store not in STORE_KINDS:
            kinds = ", ".join(STORE_KINDS)
            raise SettingsError(f"store must be one of {kinds}, not {self.store!r}")
        if self.executor not in EXECUTOR_KINDS:
            kinds = ", ".join(EXECUTOR_KINDS)
            raise SettingsError(f"KEYGRAPH_EXECUTOR must be one of {kinds}, not {self.executor!r}")
        settings = replace(self, env="dev" if self.dev else "production")
        if settings.jwt_public_key_file is None and not settings.jwt_secret:
            if not settings.dev:
                raise SettingsError(
                    "production mode needs KEYGRAPH_JWT_SECRET or KEYGRAPH_JWT_PUBLIC_KEY_FILE"
                )
            settings = replace(settings, jwt_secret=dev_secret(settings.data_dir))
        try:
            settings.check_scale()
            settings.check_subscriptions()
            settings.check_reader()
            settings.limits.check_requests()
        except ValueError as exc:
            raise SettingsError(str(exc)) from exc
        if settings.limits.tenant_budget < settings.limits.max_cost:
            raise SettingsError(
                "KEYGRAPH_TENANT_BUDGET must be at least KEYGRAPH_MAX_COST, or the costliest "
                "operation allowed could never run"
            )
        if settings.jwt_secret is not None and len(settings.jwt_secret) < 32:
            raise SettingsError("KEYGRAPH_JWT_SECRET must be at least 32 characters")
        if settings.jwt_public_key_file is not None:
            if not settings.jwt_public_key_file.is_file():
                raise SettingsError(f"no public key file at {settings.jwt_public_key_file}")
            if not settings.cursor_secret:
                raise SettingsError("KEYGRAPH_CURSOR_SECRET is needed with an RS256 public key")
        settings._check_observability()
        if settings.trusted_documents is not None:
            try:
                manifest.load(settings.trusted_documents)
            except manifest.ManifestError as exc:
                raise SettingsError(str(exc)) from exc
        return settings

    def _check_observability(self) -> None:
        if self.metrics_token is not None and len(self.metrics_token) < 16:
            raise SettingsError("KEYGRAPH_METRICS_TOKEN must be at least 16 characters")
        if self.metrics_port is not None and self.metrics_port == self.port:
            raise SettingsError("KEYGRAPH_METRICS_PORT must differ from the app's port")
        try:
            self.check_traces()
        except ValueError as exc:
            raise SettingsError(str(exc)) from exc


_NOT_FROM_ENV = frozenset({"limits"})
"""Fields no environment variable sets: every other field of Settings and Limits is set by
KEYGRAPH_ and its name in capitals, converted by its type."""


def env_names(kind: type) -> dict[str, str]:
    """The environment variable of each field of a settings dataclass that has one."""
    return {
        f"KEYGRAPH_{f.name.upper()}": f.name for f in fields(kind) if f.name not in _NOT_FROM_ENV
    }


def _types(kind: type) -> dict[str, str]:
    return {f.name: str(f.type) for f in fields(kind)}


_TYPES = {**_types(Settings), **_types(Limits)}
"""Each field's annotation, as written: what a value from the environment converts to."""


def _convert(name: str, raw: str) -> Any:
    kind = _TYPES.get(name, "str")
    if kind.startswith("Path"):
        return Path(raw)
    if kind.startswith("tuple[str"):
        return tuple(role for role in raw.replace(",", " ").split() if role)
    if kind.startswith("bool"):
        try:
            return flag(f"KEYGRAPH_{name.upper()}", raw)
        except ValueError as exc:
            raise SettingsError(str(exc)) from exc
    if kind.startswith(("int", "float")):
        number = float if kind.startswith("float") else int
        try:
            value: float = number(raw)
        except ValueError as exc:
            raise SettingsError(f"{name} must be a number, not {raw!r}") from exc
        if not value > 0:
            raise SettingsError(f"{name} must be positive, not {raw}")
        return value
    return raw


def load_settings(environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Settings from the environment (KEYGRAPH_*), with `overrides` (None means unset) last."""
    env = os.environ if environ is None else environ
    values: dict[str, Any] = {
        name: _convert(name, env[var])
        for var, name in env_names(Settings).items()
        if env.get(var) and var not in TRACE_VARIABLES
    }
    try:
        values.update(trace_values(env))  # read as `keygraph serve` reads them
    except ValueError as exc:
        raise SettingsError(str(exc)) from exc
    limits = {
        name: _convert(name, env[var])
        for var, name in env_names(Limits).items()
        if env.get(var) and var not in REQUEST_VARIABLES
    }
    try:
        limits.update(request_values(env))  # read as `keygraph serve` reads them
    except ValueError as exc:
        raise SettingsError(str(exc)) from exc
    values["limits"] = Limits(**limits)
    values.update(
        {
            key: _convert(key, value) if isinstance(value, str) else value
            for key, value in overrides.items()
            if value is not None
        }
    )
    return Settings(**values).resolved()

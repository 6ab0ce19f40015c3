"""Server settings: defaults, then KEYGRAPH_* environment variables, then explicit overrides.

Dev mode (the default) needs no configuration: with no JWT secret set, a random one is created
once and kept in the data directory, so tokens survive restarts. Production mode
(KEYGRAPH_ENV=production) refuses to start without a configured secret or public key, and
turns GraphiQL off unless asked for.
"""

from __future__ import annotations

import hashlib
import hmac
import importlib.util
import os
import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from keygraph.stores.dynamodb.connections import IDLE_TIMEOUT
from server.persisted import manifest
from server.serving.gc_tuning import YOUNG_THRESHOLD

StoreKind = Literal["embedded", "dynamodb", "dynamodb-local"]
STORE_KINDS: tuple[StoreKind, ...] = ("embedded", "dynamodb", "dynamodb-local")
ExecutorKind = Literal["compiled", "strawberry"]
EXECUTOR_KINDS: tuple[ExecutorKind, ...] = ("compiled", "strawberry")
TraceExporter = Literal["otlp", "console"]
TRACE_EXPORTERS: tuple[TraceExporter, ...] = ("otlp", "console")
OTLP_EXPORTER = "opentelemetry.exporter.otlp.proto.http.trace_exporter"


class SettingsError(ValueError):
    """Settings that cannot work; the message says which and how to fix it."""


@dataclass(frozen=True)
class Limits:
    """What one request may ask and one tenant may spend, checked before anything runs."""

    max_depth: int = 10
    max_aliases: int = 30
    max_document: int = 65_536
    """Characters of a GraphQL document (its lexer takes tens of milliseconds per 100,000)."""
    max_tokens: int = 2000
    max_fields: int = 2_500
    """Fields one operation selects, a fragment's counted each time it is spread."""
    max_pairs: int = 1_000
    """Pairs of fields under one response key at one place of the response, which validation
    compares two by two (about 30 ms at most here; a legitimate query makes a few dozen)."""
    max_first: int = 100
    max_variable_values: int = 5_000
    """Values a request's variables hold: list items and object fields, at any depth."""
    max_cost: int = 25_000
    """The most objects one operation's response may hold (server/graphql/cost.py)."""
    stream_cost: int = 25_000
    """A query that may return more objects than this is read and sent in parts
    (server/graphql/stream.py), trading store waves for memory."""
    part_objects: int = 2_000
    """Objects a part of such a response holds, about."""
    tenant_budget: int = 100_000
    """Cost points a tenant's bucket holds (server/edge/budget.py), at least max_cost."""
    tenant_refill: float = 20_000.0
    """Cost points a tenant's bucket regains each second."""
    max_body_bytes: int = 1024 * 1024
    max_query_string: int = 8192
    """Bytes of a GET request's query string."""
    request_timeout: float = 30.0
    """Seconds a request may run before it is cancelled."""
    max_in_flight: int = 64
    """Requests a worker runs at once; more are refused with 503."""
    idempotency_window: float = 600.0
    """Seconds an Idempotency-Key's first answer is kept and repeated (edge/idempotency.py)."""
    document_cache_entries: int = 512
    """Prepared documents a worker keeps, by text or by shape (graphql/document_cache.py)."""
    document_cache_chars: int = 2_000_000
    """Characters of document text those hold in all: their memory, about 20 KB per 100."""


@dataclass(frozen=True)
class Settings:
    env: Literal["dev", "production"] = "dev"
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
    dev_tenant: str = "demo"
    """The tenant of the token GraphiQL is prefilled with in dev mode."""
    roles_claim: str = "roles"
    """The token claim holding the caller's roles (e.g. `cognito:groups`)."""
    default_roles: tuple[str, ...] = ("member",)
    """The roles of a token without the roles claim."""
    host: str = "127.0.0.1"
    port: int = 8000
    limits: Limits = field(default_factory=Limits)
    workers: int = 1
    """Worker processes `serve` runs; each takes its share of a tenant's budget."""
    shutdown_timeout: float = 30.0
    """Seconds a stopping server waits for requests in flight before it closes them."""
    keep_alive: float = 75.0
    """Seconds an idle client connection stays open: longer than a load balancer's idle
    timeout (60 s on AWS), so that the balancer, not the server, closes it first."""
    batching: bool = True
    """DataLoader batching; off only for the benchmark's naive baseline (bench/)."""
    trusted_documents: Path | None = None
    """A manifest of the only operations the server runs (server/persisted/manifest.py)."""
    get_max_age: int = 0
    """Seconds a shared cache may keep a GET query's answer (per Authorization); 0: none."""
    executor: ExecutorKind = "compiled"
    """How operations run: compiled into plans (server/graphql/compiled), or by Strawberry's
    graphql-core executor; the answers are the same."""
    ws_init_timeout: float = 10.0
    """Seconds a WebSocket client has to send `connection_init` (server/realtime/)."""
    max_subscriptions_per_connection: int = 32
    max_subscriptions_per_tenant: int = 2_000
    """Subscriptions one tenant holds on one worker."""
    max_subscriptions_per_worker: int = 20_000
    max_ws_connections: int = 10_000
    """WebSocket connections one worker holds open; more are closed 1013 at once."""
    max_ws_awaiting_init: int = 256
    """Of those, the ones yet to send `connection_init`: past it the oldest is closed 1013."""
    stream_poll_interval: float | None = None
    """Seconds the change stream's reader waits when a read found nothing new; by default
    0.01 on the embedded store (a poll of its change log that finds nothing costs about
    10 µs) and 0.25 on DynamoDB (Streams allows five GetRecords a second per shard)."""
    metrics_token: str | None = None
    """Serves /metrics on the app's port to requests bearing this token
    (server/observability/exposition.py)."""
    metrics_port: int | None = None
    """Serves /metrics on this port of `metrics_host`, without a token."""
    metrics_host: str = "127.0.0.1"
    metrics_tenant_label: bool = False
    """Also counts requests and capacity units by tenant: a time series per tenant."""
    tracing: bool = False
    """OpenTelemetry spans per request, wave and store call (server/observability)."""
    gc_young_threshold: int = YOUNG_THRESHOLD
    """Allocations between collections of the young generation in a serving process
    (server/serving/gc_tuning.py)."""
    trace_exporter: TraceExporter = "otlp"
    """Where spans go: an OTLP collector over HTTP (needs the `otlp` extra; endpoint and
    headers from OTEL_EXPORTER_OTLP_*), or standard output (`console`)."""
    trace_sample: float = 1.0
    """The share of traces begun here that are kept; a caller's traceparent decides its own."""
    trace_service: str = "keygraph"
    """The spans' service.name."""

    @property
    def poll_interval(self) -> float:
        """The change stream reader's poll interval, as set or by the store's default."""
        if self.stream_poll_interval is not None:
            return self.stream_poll_interval
        return 0.01 if self.store == "embedded" else 0.25

    @property
    def dev(self) -> bool:
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
        if self.env not in ("dev", "production"):
            raise SettingsError(f"KEYGRAPH_ENV must be dev or production, not {self.env!r}")
        if self.store not in STORE_KINDS:
            kinds = ", ".join(STORE_KINDS)
            raise SettingsError(f"store must be one of {kinds}, not {self.store!r}")
        if self.executor not in EXECUTOR_KINDS:
            kinds = ", ".join(EXECUTOR_KINDS)
            raise SettingsError(f"KEYGRAPH_EXECUTOR must be one of {kinds}, not {self.executor!r}")
        settings = self
        if settings.jwt_public_key_file is None and not settings.jwt_secret:
            if not settings.dev:
                raise SettingsError(
                    "production mode needs KEYGRAPH_JWT_SECRET or KEYGRAPH_JWT_PUBLIC_KEY_FILE"
                )
            settings = replace(settings, jwt_secret=dev_secret(settings.data_dir))
        if settings.workers < 1:
            raise SettingsError(f"workers must be at least 1, not {settings.workers}")
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
        if not 0 < self.trace_sample <= 1:
            raise SettingsError(f"KEYGRAPH_TRACE_SAMPLE must be in (0, 1], not {self.trace_sample}")
        if self.trace_exporter not in TRACE_EXPORTERS:
            kinds = ", ".join(TRACE_EXPORTERS)
            raise SettingsError(
                f"KEYGRAPH_TRACE_EXPORTER must be one of {kinds}, not {self.trace_exporter!r}"
            )
        if self.tracing and self.trace_exporter == "otlp" and not _importable(OTLP_EXPORTER):
            raise SettingsError(
                "KEYGRAPH_TRACE_EXPORTER=otlp needs the OTLP exporter: "
                "pip install 'keygraph[otlp]' (or set KEYGRAPH_TRACE_EXPORTER=console)"
            )


def _importable(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except ModuleNotFoundError:
        return False


def dev_secret(data_dir: Path) -> str:
    """The dev-mode JWT secret kept in the data directory, created on first use."""
    path = data_dir / "dev-jwt-secret"
    if path.is_file():
        return path.read_text().strip()
    data_dir.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(48)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(secret + "\n")
    return secret


_ENV_FIELDS: dict[str, str] = {
    "KEYGRAPH_ENV": "env",
    "KEYGRAPH_DATA_DIR": "data_dir",
    "KEYGRAPH_STORE": "store",
    "KEYGRAPH_TABLE": "table",
    "KEYGRAPH_DYNAMODB_ENDPOINT": "dynamodb_endpoint",
    "KEYGRAPH_REGION": "region",
    "KEYGRAPH_DYNAMODB_IDLE_TIMEOUT": "dynamodb_idle_timeout",
    "KEYGRAPH_JWT_SECRET": "jwt_secret",
    "KEYGRAPH_JWT_PUBLIC_KEY_FILE": "jwt_public_key_file",
    "KEYGRAPH_CURSOR_SECRET": "cursor_secret",
    "KEYGRAPH_GRAPHIQL": "graphiql",
    "KEYGRAPH_DEV_TENANT": "dev_tenant",
    "KEYGRAPH_ROLES_CLAIM": "roles_claim",
    "KEYGRAPH_DEFAULT_ROLES": "default_roles",
    "KEYGRAPH_HOST": "host",
    "KEYGRAPH_PORT": "port",
    "KEYGRAPH_WORKERS": "workers",
    "KEYGRAPH_SHUTDOWN_TIMEOUT": "shutdown_timeout",
    "KEYGRAPH_KEEP_ALIVE": "keep_alive",
    "KEYGRAPH_EXECUTOR": "executor",
    "KEYGRAPH_TRUSTED_DOCUMENTS": "trusted_documents",
    "KEYGRAPH_GET_MAX_AGE": "get_max_age",
    "KEYGRAPH_WS_INIT_TIMEOUT": "ws_init_timeout",
    "KEYGRAPH_MAX_SUBSCRIPTIONS_PER_CONNECTION": "max_subscriptions_per_connection",
    "KEYGRAPH_MAX_SUBSCRIPTIONS_PER_TENANT": "max_subscriptions_per_tenant",
    "KEYGRAPH_MAX_SUBSCRIPTIONS_PER_WORKER": "max_subscriptions_per_worker",
    "KEYGRAPH_MAX_WS_CONNECTIONS": "max_ws_connections",
    "KEYGRAPH_MAX_WS_AWAITING_INIT": "max_ws_awaiting_init",
    "KEYGRAPH_STREAM_POLL_INTERVAL": "stream_poll_interval",
    "KEYGRAPH_METRICS_TOKEN": "metrics_token",
    "KEYGRAPH_METRICS_PORT": "metrics_port",
    "KEYGRAPH_METRICS_HOST": "metrics_host",
    "KEYGRAPH_METRICS_TENANT_LABEL": "metrics_tenant_label",
    "KEYGRAPH_TRACING": "tracing",
    "KEYGRAPH_GC_YOUNG_THRESHOLD": "gc_young_threshold",
    "KEYGRAPH_TRACE_EXPORTER": "trace_exporter",
    "KEYGRAPH_TRACE_SAMPLE": "trace_sample",
    "KEYGRAPH_TRACE_SERVICE": "trace_service",
}
_BOOLEANS = ("graphiql", "metrics_tenant_label", "tracing")
_ENV_LIMITS: dict[str, str] = {
    "KEYGRAPH_MAX_DEPTH": "max_depth",
    "KEYGRAPH_MAX_ALIASES": "max_aliases",
    "KEYGRAPH_MAX_DOCUMENT": "max_document",
    "KEYGRAPH_MAX_TOKENS": "max_tokens",
    "KEYGRAPH_MAX_FIELDS": "max_fields",
    "KEYGRAPH_MAX_PAIRS": "max_pairs",
    "KEYGRAPH_MAX_FIRST": "max_first",
    "KEYGRAPH_MAX_VARIABLE_VALUES": "max_variable_values",
    "KEYGRAPH_MAX_COST": "max_cost",
    "KEYGRAPH_STREAM_COST": "stream_cost",
    "KEYGRAPH_PART_OBJECTS": "part_objects",
    "KEYGRAPH_TENANT_BUDGET": "tenant_budget",
    "KEYGRAPH_TENANT_REFILL": "tenant_refill",
    "KEYGRAPH_MAX_BODY_BYTES": "max_body_bytes",
    "KEYGRAPH_MAX_QUERY_STRING": "max_query_string",
    "KEYGRAPH_REQUEST_TIMEOUT": "request_timeout",
    "KEYGRAPH_MAX_IN_FLIGHT": "max_in_flight",
    "KEYGRAPH_IDEMPOTENCY_WINDOW": "idempotency_window",
    "KEYGRAPH_DOCUMENT_CACHE_ENTRIES": "document_cache_entries",
    "KEYGRAPH_DOCUMENT_CACHE_CHARS": "document_cache_chars",
}
_FLOATS = (
    "request_timeout",
    "shutdown_timeout",
    "keep_alive",
    "tenant_refill",
    "idempotency_window",
    "dynamodb_idle_timeout",
    "ws_init_timeout",
    "stream_poll_interval",
    "trace_sample",
)


def _convert(name: str, raw: str) -> Any:
    if name in ("data_dir", "jwt_public_key_file", "trusted_documents"):
        return Path(raw)
    if name == "default_roles":
        return tuple(role for role in raw.replace(",", " ").split() if role)
    if name in _BOOLEANS:
        if raw.lower() not in ("1", "true", "yes", "0", "false", "no"):
            raise SettingsError(f"KEYGRAPH_{name.upper()} must be true or false, not {raw!r}")
        return raw.lower() in ("1", "true", "yes")
    if name in (
        "port",
        "metrics_port",
        "trace_sample",
        "workers",
        "get_max_age",
        "shutdown_timeout",
        "keep_alive",
        "dynamodb_idle_timeout",
        "ws_init_timeout",
        "max_subscriptions_per_connection",
        "max_subscriptions_per_tenant",
        "max_subscriptions_per_worker",
        "max_ws_connections",
        "max_ws_awaiting_init",
        "stream_poll_interval",
        "gc_young_threshold",
        *_ENV_LIMITS.values(),
    ):
        kind = float if name in _FLOATS else int
        try:
            value: float = kind(raw)
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
        name: _convert(name, env[var]) for var, name in _ENV_FIELDS.items() if env.get(var)
    }
    limits = {name: _convert(name, env[var]) for var, name in _ENV_LIMITS.items() if env.get(var)}
    values["limits"] = Limits(**limits)
    values.update(
        {
            key: _convert(key, value) if isinstance(value, str) else value
            for key, value in overrides.items()
            if value is not None
        }
    )
    return Settings(**values).resolved()

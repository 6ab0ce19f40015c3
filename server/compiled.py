"""What `serve` answers with: the API the spec compiles to (`generated`) with this
repository's extension, as `keygraph serve --package generated --extend server.extension`
serves it, its options taken from the server's settings (KEYGRAPH_*), each once here."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from keygraph.serve.document_cache import DocumentCache
from keygraph.serve.manifest import load
from keygraph.serve.package import Keys, extension_at, served, table_of
from keygraph.serve.patterns import Patterns
from keygraph.serve.persisted import Documents
from keygraph.serve.served import Served
from keygraph.serve.subscription_settings import SubscriptionSettings
from keygraph.serve.trace_provider import tracer_provider
from keygraph.serve.worker_budget import worker_budget
from keygraph.store import Store
from keygraph.streams import ChangeStream
from server.auth.tokens import issue_token, token_key
from server.domain import cleanup
from server.settings import Settings

if TYPE_CHECKING:
    from keygraph.serve.elected import Elected

PACKAGE = "generated"
EXTENSION = "server.extension"
SPEC = Path(__file__).resolve().parents[1] / "access_patterns.toml"
"""The spec the generated package was made from: it names the store calls' patterns in
metrics and traces."""
DEV_ROLES = ("admin",)
"""The roles of the token GraphiQL's page holds in dev mode, and `serve --demo` prints."""


def dev_token(settings: Settings) -> str:
    """A token of the dev tenant with DEV_ROLES, signed with the settings' secret."""
    return issue_token(settings, settings.dev_tenant, "dev", roles=list(DEV_ROLES))


def compiled(settings: Settings, store: Store, stream: ChangeStream | None = None) -> Served:
    """The compiled API on `store`, as the settings ask; its subscriptions fed by `stream`,
    else by the store's own change stream; with Redis, by the Redis Stream one reader
    elected among every host's workers appends that stream to."""
    limits = settings.limits
    budget, closing = worker_budget(
        limits.tenant_budget, limits.tenant_refill, settings, settings.table
    )
    options: dict[str, Any] = {
        "max_body_bytes": limits.max_body_bytes,
        "max_document": limits.max_document,
        "max_tokens": limits.max_tokens,
        "max_depth": limits.max_depth,
        "max_aliases": limits.max_aliases,
        "max_fields": limits.max_fields,
        "max_pairs": limits.max_pairs,
        "max_variable_values": limits.max_variable_values,
        "max_cost": limits.max_cost,
        "stream_cost": limits.stream_cost,
        "part_objects": limits.part_objects,
        "max_query_string": limits.max_query_string,
        "max_in_flight": limits.max_in_flight,
        "subscriptions": SubscriptionSettings(
            settings.max_subscriptions_per_tenant, settings.max_subscriptions_per_worker
        ),
        "documents": DocumentCache(limits.document_cache_entries, limits.document_cache_chars),
        "request_timeout": limits.request_timeout,
        "compiled": settings.executor == "compiled",
        "budget": budget,
        "starting": (cleanup.resume_at_start,),
        "closing": (*closing, cleanup.stop),
        "graphiql": settings.graphiql_enabled,
        "dev": settings.dev,
        "max_subscriptions": settings.max_subscriptions_per_connection,
        "max_connections": settings.max_ws_connections_per_tenant,
        "init_timeout": settings.ws_init_timeout,
        "metered": settings.metrics_enabled,
        "metrics_token": settings.metrics_token,
        "tracer_provider": tracer_provider(settings),
    }
    if settings.metrics_enabled or options["tracer_provider"] is not None:
        options["pattern_of"] = Patterns.load(SPEC).of_call
    if settings.trusted_documents is not None:
        options["persisted"] = Documents(load(settings.trusted_documents))
    if settings.dev and settings.jwt_secret is not None:
        options["dev_authorization"] = lambda: f"Bearer {dev_token(settings)}"
    if settings.redis_url is not None:
        elected = _elected(settings, store, settings.redis_url)
        options["source"] = elected.source
        options["starting"] = (*options["starting"], elected.start)
        options["closing"] = (elected.close, *options["closing"])
    keys = Keys(token_key(settings), settings.cursor_key())
    extension = extension_at(EXTENSION, PACKAGE)
    return served(
        PACKAGE, store, keys, [extension], stream=stream, poll=settings.poll_interval, **options
    )


def _elected(settings: Settings, store: Store, url: str) -> Elected:
    """This worker's part in the one reader of the change stream for every host sharing
    Redis at `url` (redis-py is loaded only then)."""
    from keygraph.serve.elected import Elected

    return Elected(store, table_of(PACKAGE, settings.table), url, settings, settings.poll_interval)

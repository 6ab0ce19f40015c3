"""A generated package served: its API made executable on a store with the extensions
given, tokens checked with the secret (secret.py) and the roles settings, and cursors signed
with a key derived from it: what `keygraph serve` and the Lambda handler both run."""

from __future__ import annotations

import hashlib
import hmac
import importlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from types import ModuleType
from typing import Any

from graphql import GraphQLSchema

from keygraph.api import Extension, executable
from keygraph.api.watches import Realtime, decoder
from keygraph.cursor import CursorCodec
from keygraph.plan import TableDef
from keygraph.realtime.cursors import EventCursors
from keygraph.realtime.hub import Hub
from keygraph.realtime.sources import Source
from keygraph.store import Store
from keygraph.stores import stream_of
from keygraph.streams import ChangeStream, NoStream
from keygraph.tokens import TokenKey

from .budget import Budget, throttled
from .idempotency import Ledger
from .served import Served

POLL_SECONDS = 0.05
"""How often the hub looks for new records when the stream had none."""


def table_of(package: str, name: str | None = None) -> TableDef:
    """The package's table, under `name` when the deployed table has another."""
    table: TableDef = importlib.import_module(f"{package}.table").TABLE
    return replace(table, name=name) if name else table


def extension_at(place: str, package: str) -> Extension:
    """The Extension at `module[:name]` (name by default EXTENSION), or what the function
    there makes of the generated package (its module: a spec compiled as `keygraph serve`
    starts has a name of its own); ValueError when there is none."""
    module_name, _, name = place.partition(":")
    try:
        found = getattr(importlib.import_module(module_name), name or "EXTENSION", None)
    except ImportError as exc:
        raise ValueError(f"cannot import the extension {place}: {exc}") from None
    if callable(found) and not isinstance(found, Extension):
        found = found(importlib.import_module(package))
    if not isinstance(found, Extension):
        raise ValueError(f"{place} is not a keygraph.api.Extension, nor makes one")
    return found


def _guards(package: str) -> ModuleType | None:
    """The package's generated guards; None for a spec without authorization."""
    try:
        return importlib.import_module(f"{package}.authz")
    except ModuleNotFoundError as exc:
        if exc.name != f"{package}.authz":
            raise
        return None


def schema_of(package: str, extensions: Sequence[Extension] = ()) -> GraphQLSchema:
    """The package's API with `extensions`, executable, as it is served; ValueError for an
    extension that cannot be served."""
    api: Any = importlib.import_module(f"{package}.api").API
    return executable(api, extensions, _guards(package) if extensions else None)


@dataclass(frozen=True)
class Keys:
    """How tokens are checked, and the key cursors are signed with."""

    tokens: TokenKey
    cursors: bytes

    @classmethod
    def signed_with(cls, signing: str) -> Keys:
        """HS256 tokens signed with `signing`, their roles where KEYGRAPH_ROLES_CLAIM says
        (those of KEYGRAPH_DEFAULT_ROLES when they name none), and cursors signed with a key
        derived from it."""
        roles = os.environ.get("KEYGRAPH_DEFAULT_ROLES", "member").replace(",", " ").split()
        claim = os.environ.get("KEYGRAPH_ROLES_CLAIM", "roles")
        tokens = TokenKey(signing, "HS256", claim, frozenset(roles))
        return cls(tokens, hmac.new(signing.encode(), b"keygraph cursors", hashlib.sha256).digest())


def served(
    package: str,
    store: Store,
    signing: str | Keys,
    extensions: Sequence[Extension] = (),
    *,
    stream: ChangeStream | None = None,
    poll: float = POLL_SECONDS,
    source: Callable[[ChangeStream], Source] | None = None,
    **options: Any,
) -> Served:
    """The package's API, with `extensions`, on `store`, with tokens and cursors keyed by
    `signing` (a secret, or Keys), and the app's other `options` (Served's budget,
    GraphiQL); subscriptions when the API has some and there is a change stream: `stream`,
    else the store's own, looked for new records every `poll` seconds, or what `source`
    makes of it feeds them (the Redis Stream of one elected reader: elected.py).
    ValueError for an extension that cannot be served."""
    api: Any = importlib.import_module(f"{package}.api").API
    keys = Keys.signed_with(signing) if isinstance(signing, str) else signing
    cursors = CursorCodec(keys.cursors)
    realtime = None
    if api.watches and stream is None:
        try:
            stream = stream_of(store)
        except NoStream:
            stream = None
    if api.watches and stream is not None:
        table = table_of(package)
        hub = Hub(stream, poll, decoder(api, table), None if source is None else source(stream))
        payer = _payer(options.get("budget"))
        realtime = Realtime(hub, EventCursors(cursors), table, payer, api.tenant_prefixes)
    ledger = Ledger(store, table_of(package))
    sweeps = api.writes if any(w.owned for w in api.writes.values()) else {}
    schema = schema_of(package, extensions)
    app = Served(
        schema,
        store,
        keys.tokens,
        cursors,
        realtime=realtime,
        ledger=ledger,
        table=table_of(package),
    )
    app = replace(app, sweeps=sweeps)
    return replace(app, **options)


def _payer(budget: Budget | None) -> Callable[[str], Callable[[int], None]]:
    """How a tenant pays for a replay: points from its budget, THROTTLED when spent."""

    def payer(tenant: str) -> Callable[[int], None]:
        def pay(points: int) -> None:
            if budget is not None:
                admission = budget.take(tenant, points)
                if not admission.admitted:
                    raise throttled(admission, points)

        return pay

    return payer

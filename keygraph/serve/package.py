"""A generated package served: its API made executable on a store, tokens checked with the
secret (secret.py) and the roles settings, and cursors signed with a key derived from it:
what `keygraph serve` and the Lambda handler both run."""

from __future__ import annotations

import hashlib
import hmac
import importlib
import os
from dataclasses import replace
from typing import Any

from keygraph.api import executable
from keygraph.cursor import CursorCodec
from keygraph.plan import TableDef
from keygraph.store import Store
from keygraph.tokens import TokenKey

from .app import Served


def table_of(package: str, name: str | None = None) -> TableDef:
    """The package's table, under `name` when the deployed table has another."""
    table: TableDef = importlib.import_module(f"{package}.table").TABLE
    return replace(table, name=name) if name else table


def served(package: str, store: Store, signing: str, **options: Any) -> Served:
    """The package's API on `store`, with tokens and cursors keyed by `signing`, and the
    app's other `options` (Served's budget, GraphiQL)."""
    api: Any = importlib.import_module(f"{package}.api").API
    roles = os.environ.get("KEYGRAPH_DEFAULT_ROLES", "member").replace(",", " ").split()
    claim = os.environ.get("KEYGRAPH_ROLES_CLAIM", "roles")
    key = TokenKey(signing, "HS256", claim, frozenset(roles))
    cursors = CursorCodec(hmac.new(signing.encode(), b"keygraph cursors", hashlib.sha256).digest())
    return Served(executable(api), store, key, cursors, **options)

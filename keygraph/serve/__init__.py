"""Serving a generated package's API over HTTP (`keygraph serve`): the app, the command that
runs it on the embedded store or DynamoDB, the tenant budget, GraphiQL's offline page,
persisted documents, Prometheus metrics and OpenTelemetry traces (all also the repository's
server's). Needs the `serve` extra (`pip install 'keygraph[serve]'`), and the `tracing` one
to trace. The app is imported when first asked for, so that what needs only the budget or
GraphiQL's page does not load it."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .app import create_app
    from .served import Served

__all__ = ["Served", "create_app"]

_HOMES = {"Served": ".served", "create_app": ".app"}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(importlib.import_module(_HOMES[name], __name__), name)

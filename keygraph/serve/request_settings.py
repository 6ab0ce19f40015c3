"""How long a request may run, from the KEYGRAPH_REQUEST_TIMEOUT variable: both servers read
it, `keygraph serve` here (cli.py, lambda_handler.py) and the repository's server as part of
its limits (server/settings.py). A request past it is cut (deadlines.py): 504 TIMEOUT."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

REQUEST_TIMEOUT = 30.0
"""Seconds a request may run by default."""


@dataclass(frozen=True)
class RequestSettings:
    """What bounds a request over HTTP; each field is set by KEYGRAPH_ and its name in
    capitals."""

    request_timeout: float = REQUEST_TIMEOUT
    """Seconds a request may run before it is cancelled and answered 504 TIMEOUT."""

    def check_requests(self) -> None:
        """ValueError saying what to change when these settings cannot work."""
        timeout = self.request_timeout
        if not (timeout > 0 and math.isfinite(timeout)):
            raise ValueError(f"KEYGRAPH_REQUEST_TIMEOUT must be a positive number, not {timeout}")


REQUEST_VARIABLES = {f"KEYGRAPH_{f.name.upper()}": f.name for f in fields(RequestSettings)}
"""Each request setting's variable, and the field it sets."""


def request_values(environ: Mapping[str, str]) -> dict[str, Any]:
    """The request settings `environ` sets (an empty variable is unset), by field, converted;
    ValueError for a value that is not a number."""
    values: dict[str, Any] = {}
    for variable, name in REQUEST_VARIABLES.items():
        raw = environ.get(variable)
        if not raw:
            continue
        try:
            values[name] = float(raw)
        except ValueError:
            raise ValueError(f"{variable} must be a number, not {raw!r}") from None
    return values


def request_settings(environ: Mapping[str, str] | None = None) -> RequestSettings:
    """The request settings of `environ` (by default the process's), checked; ValueError
    when they cannot work."""
    settings = RequestSettings(**request_values(os.environ if environ is None else environ))
    settings.check_requests()
    return settings

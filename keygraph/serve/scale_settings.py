"""How a server scales out, from the KEYGRAPH_WORKERS and KEYGRAPH_REDIS_URL variables: both
servers read them, `keygraph serve` here (cli.py, as its flags' defaults) and the
repository's server as part of its settings (server/settings.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from .environment import values_set, whole


@dataclass(frozen=True)
class ScaleSettings:
    """Worker processes and what they share; each field is set by KEYGRAPH_ and its name in
    capitals."""

    workers: int = 1
    """Worker processes serving one port (workers.py); without a Redis URL each takes its
    share of a tenant's budget (budget.py's `share`)."""
    redis_url: str | None = None
    """Redis (or Valkey) every worker of every host shares tenants' budgets through
    (keygraph/shared/; needs the `redis` extra), each worker's own share the fallback while
    it cannot be reached; unset: each worker counts its own. The repository's server shares
    its places and change stream there too (server/settings.py)."""

    def check_scale(self) -> None:
        """ValueError saying what to change when these settings cannot work."""
        if self.workers < 1:
            raise ValueError(f"workers must be at least 1, not {self.workers}")


SCALE_VARIABLES = {f"KEYGRAPH_{f.name.upper()}": f.name for f in fields(ScaleSettings)}
"""Each scale setting's variable, and the field it sets."""


def scale_values(environ: Mapping[str, str]) -> dict[str, Any]:
    """The scale settings `environ` sets (an empty variable is unset), by field, converted;
    ValueError for a number of workers that is not a whole number."""
    return values_set(environ, SCALE_VARIABLES, {"workers": whole})

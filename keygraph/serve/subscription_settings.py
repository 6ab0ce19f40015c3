"""How many subscriptions a tenant and a worker hold at once, from the
KEYGRAPH_MAX_SUBSCRIPTIONS_PER_TENANT and KEYGRAPH_MAX_SUBSCRIPTIONS_PER_WORKER variables: both
servers read them, `keygraph serve` here (cli.py, as its flags' defaults) and the
repository's server as part of its settings (server/settings.py). A subscribe past either is
refused with an `error` message, code SUBSCRIPTION_LIMIT (subscription_limits.py)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from .environment import values_set, whole


@dataclass(frozen=True)
class SubscriptionSettings:
    """The subscriptions a worker holds; each field is set by KEYGRAPH_ and its name in
    capitals."""

    max_subscriptions_per_tenant: int = 2_000
    """Subscriptions one tenant holds at once on a worker (the repository's server with a
    Redis URL: on all hosts together)."""
    max_subscriptions_per_worker: int = 20_000
    """Subscriptions a worker holds at once, every tenant's."""

    def check_subscriptions(self) -> None:
        """ValueError saying what to change when these settings cannot work."""
        for name, variable in SUBSCRIPTION_FIELDS.items():
            if getattr(self, name) < 1:
                raise ValueError(f"{variable} must be at least 1, not {getattr(self, name)}")


SUBSCRIPTION_VARIABLES = {
    f"KEYGRAPH_{f.name.upper()}": f.name for f in fields(SubscriptionSettings)
}
"""Each subscription setting's variable, and the field it sets."""
SUBSCRIPTION_FIELDS = {name: variable for variable, name in SUBSCRIPTION_VARIABLES.items()}
"""Each subscription setting's field, and the variable that sets it."""


def subscription_settings(
    environ: Mapping[str, str] | None = None, **given: int | None
) -> SubscriptionSettings:
    """The subscription settings of `environ` (by default the process's; an empty variable is
    unset), those `given` (a flag's, None for unset) over them, checked; ValueError when
    they cannot work."""
    values: dict[str, Any] = values_set(
        os.environ if environ is None else environ,
        SUBSCRIPTION_VARIABLES,
        dict.fromkeys(SUBSCRIPTION_FIELDS, whole),
    )
    values.update({name: value for name, value in given.items() if value is not None})
    settings = SubscriptionSettings(**values)
    settings.check_subscriptions()
    return settings

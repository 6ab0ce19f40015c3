"""How the one change stream reader for every host sharing Redis is elected and what the
Redis Stream it appends to keeps (elected.py), from the KEYGRAPH_READER_LEASE,
KEYGRAPH_REDIS_STREAM_RETENTION and KEYGRAPH_REDIS_STREAM_MAX variables: both servers read
them, `keygraph serve` here (cli.py) and the repository's server as part of its settings
(server/settings.py). They matter only with a Redis URL (scale_settings.py)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from .environment import number, values_set, whole


@dataclass(frozen=True)
class ReaderSettings:
    """The elected reader's lease and the Redis Stream's bounds; each field is set by
    KEYGRAPH_ and its name in capitals."""

    reader_lease: float = 8.0
    """Seconds the lease of the one change stream reader for every host lasts unrenewed: a
    reader that stops is replaced within it, and a contender's look at the lease, after."""
    redis_stream_retention: float = 3600.0
    """Seconds of changes the Redis Stream keeps: a resume within them reads Redis."""
    redis_stream_max: int = 1_000_000
    """Entries the Redis Stream keeps at most (its memory, about 1 KB an entry)."""

    def check_reader(self) -> None:
        """ValueError saying what to change when these settings cannot work."""
        for name, variable in READER_FIELDS.items():
            if not getattr(self, name) > 0:
                raise ValueError(f"{variable} must be positive, not {getattr(self, name)}")


READER_VARIABLES = {f"KEYGRAPH_{f.name.upper()}": f.name for f in fields(ReaderSettings)}
"""Each reader setting's variable, and the field it sets."""
READER_FIELDS = {name: variable for variable, name in READER_VARIABLES.items()}
"""Each reader setting's field, and the variable that sets it."""
_PARSED = {f.name: whole if f.type == "int" else number for f in fields(ReaderSettings)}
"""How each field's variable is read: a whole number for a count, else a number."""


def reader_settings(environ: Mapping[str, str] | None = None) -> ReaderSettings:
    """The reader settings of `environ` (by default the process's; an empty variable is
    unset), checked; ValueError when they cannot work."""
    values: dict[str, Any] = values_set(
        os.environ if environ is None else environ, READER_VARIABLES, _PARSED
    )
    settings = ReaderSettings(**values)
    settings.check_reader()
    return settings

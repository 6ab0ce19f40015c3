"""How both servers read a KEYGRAPH_* variable that holds a flag (server/settings.py,
trace_settings.py)."""

from __future__ import annotations

TRUE = ("1", "true", "yes")
FALSE = ("0", "false", "no")


def flag(variable: str, raw: str) -> bool:
    """The flag `raw` spells, in any case; ValueError naming `variable` for anything else."""
    spelled = raw.lower()
    if spelled not in TRUE + FALSE:
        raise ValueError(f"{variable} must be true or false, not {raw!r}")
    return spelled in TRUE

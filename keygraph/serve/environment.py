"""How both servers read KEYGRAPH_* variables (server/settings.py, trace_settings.py,
scale_settings.py): a flag, a number, and the fields a group of variables sets."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

TRUE = ("1", "true", "yes")
FALSE = ("0", "false", "no")

Parse = Callable[[str, str], Any]
"""A field's value from a variable's name and its text; ValueError naming the variable."""


def flag(variable: str, raw: str) -> bool:
    """The flag `raw` spells, in any case; ValueError naming `variable` for anything else."""
    spelled = raw.lower()
    if spelled not in TRUE + FALSE:
        raise ValueError(f"{variable} must be true or false, not {raw!r}")
    return spelled in TRUE


def whole(variable: str, raw: str) -> int:
    """The whole number `raw` spells; ValueError naming `variable` for anything else."""
    try:
        return int(raw)
    except ValueError:
        raise ValueError(f"{variable} must be a whole number, not {raw!r}") from None


def number(variable: str, raw: str) -> float:
    """The number `raw` spells; ValueError naming `variable` for anything else."""
    try:
        return float(raw)
    except ValueError:
        raise ValueError(f"{variable} must be a number, not {raw!r}") from None


def values_set(
    environ: Mapping[str, str], variables: Mapping[str, str], parsed: Mapping[str, Parse]
) -> dict[str, Any]:
    """The fields `environ` sets through `variables` (variable to field; an empty variable
    is unset), each read by its parser in `parsed`, else kept as text."""
    values: dict[str, Any] = {}
    for variable, name in variables.items():
        raw = environ.get(variable)
        if raw:
            parse = parsed.get(name)
            values[name] = raw if parse is None else parse(variable, raw)
    return values

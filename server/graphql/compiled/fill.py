"""Fill functions: Python source generated per object selection and compiled once, which
writes an object's plain fields (attributes answered as they are, __typename) in one call,
without a loop over fields. Every other field gets a placeholder in its place, so the
response keeps the selection's order when the general completion fills it in."""

from __future__ import annotations

import keyword
from collections.abc import Callable, Sequence
from typing import Any

Fill = Callable[[Any, dict[str, Any]], bool]
"""Writes the object's keys into the dict; False (having written nothing) when a value is
not plain, so the general completion answers every field of it instead."""

_CHECKS: dict[type, str] = {
    str: "type({v}) is str",
    bool: "type({v}) is bool",
    int: "type({v}) is int and -2147483648 <= {v} < 2147483648",
    float: "type({v}) is float and {v} - {v} == 0",
}
"""When a value of a built-in scalar is answered unchanged (as run.py's `_unchanged`)."""


class Plain:
    """One key of a selection as the fill function writes it."""

    __slots__ = ("attribute", "exact", "key", "nullable", "typename")

    def __init__(
        self,
        key: str,
        *,
        attribute: str | None = None,
        exact: type | None = None,
        nullable: bool = True,
        typename: str | None = None,
    ) -> None:
        self.key = key
        self.attribute = attribute
        self.exact = exact
        self.nullable = nullable
        self.typename = typename

    @property
    def inline(self) -> bool:
        """Whether the fill function answers it (else it only holds its place)."""
        if self.typename is not None:
            return True
        name = self.attribute
        return (
            name is not None
            and self.exact in _CHECKS
            and name.isidentifier()
            and not keyword.iskeyword(name)
        )


def compile_fill(keys: Sequence[Plain]) -> Fill | None:
    """The fill function of a selection; None when none of its keys is plain."""
    if not any(key.inline for key in keys):
        return None
    reads, checks, writes = [], [], []
    for index, key in enumerate(keys):
        if key.typename is not None:
            writes.append(f"    out[{key.key!r}] = {key.typename!r}")
            continue
        if not key.inline:
            writes.append(f"    out[{key.key!r}] = None")
            continue
        value = f"v{index}"
        reads.append(f"        {value} = src.{key.attribute}")
        assert key.exact is not None
        check = _CHECKS[key.exact].format(v=value)
        checks.append(f"({value} is None or {check})" if key.nullable else f"({check})")
        writes.append(f"    out[{key.key!r}] = {value}")
    lines = ["def fill(src, out):"]
    if reads:
        lines += ["    try:", *reads, "    except AttributeError:", "        return False"]
    if checks:
        lines += [f"    if not ({' and '.join(checks)}):", "        return False"]
    lines += [*writes, "    return True"]
    namespace: dict[str, Any] = {}
    exec(compile("\n".join(lines), "<keygraph fill>", "exec"), namespace)
    fill: Fill = namespace["fill"]
    return fill

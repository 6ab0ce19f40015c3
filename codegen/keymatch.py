"""Reasoning about the strings key templates can produce: can two templates render the same
key, can one render a prefix of the other. Placeholders stand for the values their types
allow once escaped (no "#"); a path stands for one or more segments."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from .keytemplate import Template
from .pytypes import KeyVar

_DATETIME = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$")
_DATE = re.compile(r"^\d{4}-\d\d-\d\d$")


@dataclass(frozen=True, slots=True)
class Slot:
    """A segment with its placeholder resolved: literal text, or a typed value."""

    literal: str | None
    var: KeyVar | None

    @property
    def is_path(self) -> bool:
        return self.var is not None and self.var.type == "path"


def slots(template: Template, lookup: Callable[[str], KeyVar | None]) -> list[Slot]:
    out: list[Slot] = []
    for segment in template.segments:
        if segment.literal is not None:
            out.append(Slot(segment.literal, None))
        else:
            var = lookup(str(segment.placeholder))
            out.append(Slot(None, var or KeyVar(str(segment.placeholder), "string")))
    return out


def _accepts(var: KeyVar, literal: str) -> bool:
    if var.type == "int":
        return literal.isdigit() and len(literal) == var.width
    if var.type == "datetime":
        return bool(_DATETIME.match(literal))
    if var.type == "date":
        return bool(_DATE.match(literal))
    if var.type == "enum":
        return literal in var.values
    return True


def slot_can_equal(a: Slot, b: Slot) -> bool:
    if a.var is None and b.var is None:
        return a.literal == b.literal
    if a.var is None:
        return _accepts(b.var, str(a.literal)) if b.var else False
    if b.var is None:
        return _accepts(a.var, str(b.literal))
    for x, y in ((a.var, b.var), (b.var, a.var)):
        if x.type == "enum":  # finitely many renderings
            return any(_accepts(y, v) for v in x.values)
    if "id" in (a.var.type, b.var.type) or "string" in (a.var.type, b.var.type):
        return True
    if a.var.type == "path" or b.var.type == "path":
        return True
    return a.var.type == b.var.type and a.var.width == b.var.width


def can_equal(a: Sequence[Slot], b: Sequence[Slot]) -> bool:
    """Whether both slot lists can render the same key."""
    if not a or not b:
        return not a and not b
    if a[0].is_path:
        return any(can_equal(a[1:], b[k:]) for k in range(1, len(b) + 1))
    if b[0].is_path:
        return any(can_equal(a[k:], b[1:]) for k in range(1, len(a) + 1))
    return slot_can_equal(a[0], b[0]) and can_equal(a[1:], b[1:])


def can_start(prefix: Sequence[Slot], full: Sequence[Slot], *, strict: bool) -> bool:
    """Whether `full` can render a key starting with `prefix`'s rendering followed by a
    delimiter (strict) or ending there (not strict)."""
    if not prefix:
        return bool(full) or not strict
    if not full:
        return False
    if full[0].is_path:
        return True  # a path can hold all of the prefix's segments and continue past it
    if prefix[0].is_path:
        return any(can_start(prefix[1:], full[k:], strict=strict) for k in range(1, len(full) + 1))
    return slot_can_equal(prefix[0], full[0]) and can_start(prefix[1:], full[1:], strict=strict)


def can_begin(prefix: Sequence[Slot], partial: str, full: Sequence[Slot]) -> bool:
    """Whether `full` can render a key starting with `prefix`'s rendering, a delimiter (when
    `prefix` is not empty) and then the text `partial`."""
    if any(s.is_path for s in (*prefix, *full)):
        return True
    if len(full) <= len(prefix) or not can_equal(prefix, full[: len(prefix)]):
        return False
    nxt = full[len(prefix)]
    return nxt.literal is None or nxt.literal.startswith(partial)

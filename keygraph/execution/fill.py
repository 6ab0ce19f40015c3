"""Fill functions: Python source generated per object selection and compiled once, which
writes an object's plain fields in one call, without a loop over fields, a path or a place
per value. Plain are __typename, attributes of built-in scalars answered as they are, other
leaf attributes through their scalar's coercion, and attributes holding an object (or a list
of objects) whose selection is all plain. Every other field gets a placeholder in its place,
so the response keeps the selection's order when the general completion fills it in."""

from __future__ import annotations

import keyword
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from types import CodeType
from typing import Any

from graphql.pyutils import Undefined

Fill = Callable[[Any, dict[str, Any]], bool]
"""Writes the object's keys into the dict; False (having written nothing) when any value is
not plain, so the general completion answers the whole object instead, errors and all."""

_CHECKS: dict[type, str] = {
    str: "type({v}) is str",
    bool: "type({v}) is bool",
    int: "type({v}) is int and -2147483648 <= {v} < 2147483648",
    float: "type({v}) is float and {v} - {v} == 0",
}
"""When a value of a built-in scalar is answered unchanged (as plan.py's `unchanged`)."""


@dataclass(frozen=True, slots=True)
class Plain:
    """One key of a selection as the fill function writes it: at most one of typename,
    exact, coerce and inner is set; with none, the key only holds its place."""

    key: str
    attribute: str | None = None
    nullable: bool = True
    typename: str | None = None
    exact: type | None = None
    """A built-in scalar's Python type, answered as it is."""
    coerce: Callable[[Any], Any] | None = None
    """A leaf's coercion to its output value."""
    inner: Fill | None = None
    """The fill function of the object (or of each object of the list) the attribute holds."""
    inner_class: type | None = None
    """The class an inner object must be of (None: any)."""
    is_list: bool = False

    @property
    def inline(self) -> bool:
        """Whether the fill function answers it (else it only holds its place)."""
        if self.typename is not None:
            return True
        name = self.attribute
        if name is None or not name.isidentifier() or keyword.iskeyword(name):
            return False
        return self.exact in _CHECKS or self.coerce is not None or self.inner is not None


def compile_fill(keys: Sequence[Plain]) -> Fill | None:
    """The fill function of a selection; None when none of its keys is plain."""
    if not any(key.inline for key in keys):
        return None
    # Response keys, type names and helpers are bound as parameter defaults (fast local
    # reads), so the source depends only on the selection's shape and is compiled once
    # for every selection of that shape, whatever its aliases.
    namespace: dict[str, Any] = {"Undefined": Undefined}
    body, writes = [], []
    for index, key in enumerate(keys):
        namespace[f"k{index}"] = key.key
        if key.typename is not None:
            namespace[f"n{index}"] = key.typename
            writes.append(f"    out[k{index}] = n{index}")
        elif not key.inline:
            writes.append(f"    out[k{index}] = None")
        else:
            body += _value(key, index, namespace)
            writes.append(f"    out[k{index}] = o{index}")
    bound = ", ".join(f"{name}={name}" for name in namespace if name != "Undefined")
    lines = [f"def fill(src, out, {bound}):"]
    if body:
        lines += ["    try:", *body, "    except Exception:", "        return False"]
    lines += [*writes, "    return True"]
    exec(_code("\n".join(lines)), namespace)
    fill: Fill = namespace["fill"]
    return fill


_CODE_KEPT = 4096
"""Compiled sources kept: selections of one shape, in any operation, share their code."""
_codes: dict[str, CodeType] = {}


def _code(source: str) -> CodeType:
    """The compiled source, compiled once: compiling costs far more than running it."""
    code = _codes.get(source)
    if code is None:
        code = compile(source, "<keygraph fill>", "exec")
        if len(_codes) >= _CODE_KEPT:
            _codes.clear()
        _codes[source] = code
    return code


def _value(key: Plain, index: int, namespace: dict[str, Any]) -> list[str]:
    """Lines reading the key's attribute into v<index> and its output into o<index>, or
    returning False."""
    v, o = f"v{index}", f"o{index}"
    lines = [f"        {v} = src.{key.attribute}", f"        if {v} is None:"]
    lines.append(f"            {o} = None" if key.nullable else "            return False")
    if key.exact is not None and key.exact in _CHECKS:
        check = _CHECKS[key.exact].format(v=v)
        return [*lines, f"        elif {check}:", f"            {o} = {v}", *_ELSE_FAIL]
    lines.append("        else:")
    if key.coerce is not None:
        namespace[f"c{index}"] = key.coerce
        return [
            *lines,
            f"            {o} = c{index}({v})",
            f"            if {o} is None or {o} is Undefined:",
            "                return False",
        ]
    namespace[f"f{index}"] = key.inner
    namespace[f"t{index}"] = key.inner_class
    if key.is_list:
        wrong = f" or type(x) is not t{index}" if key.inner_class is not None else ""
        return [
            *lines,
            f"            if type({v}) is not list:",
            "                return False",
            f"            {o} = []",
            f"            for x in {v}:",
            "                d = {}",
            f"                if x is None{wrong} or not f{index}(x, d):",
            "                    return False",
            f"                {o}.append(d)",
        ]
    test = f"not f{index}({v}, {o})"
    if key.inner_class is not None:
        test = f"type({v}) is not t{index} or {test}"
    return [
        *lines,
        f"            {o} = {{}}",
        f"            if {test}:",
        "                return False",
    ]


_ELSE_FAIL = ("        else:", "            return False")

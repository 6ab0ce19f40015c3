"""Import blocks in the order ruff's isort rules want (its defaults), so generated modules
need only `ruff format` afterwards: sections future, standard library, third party, the
keygraph runtime, relative;
`import x` before `from x import ...`; modules case-insensitively, `..` before `.`; names
constants, then classes, then the rest; aliased names on lines of their own."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterable

_FROM = re.compile(r"^from (\S+) import (.+)$")
_IMPORT = re.compile(r"^import (\S+)$")


RUNTIME = "keygraph"
"""The runtime library: its own section, as ruff sorts a first-party package."""


def _section(module: str) -> int:
    if module.startswith("."):
        return 4
    if module == "__future__":
        return 0
    top = module.split(".", maxsplit=1)[0]
    if top == RUNTIME:
        return 3
    return 1 if top in sys.stdlib_module_names else 2


def _module_key(module: str) -> tuple[int, str]:
    dots = len(module) - len(module.lstrip("."))
    return -dots, module.lstrip(".").lower()


def _name_key(name: str) -> tuple[int, str]:
    base = name.split(" as ", maxsplit=1)[0]
    if base.isupper() and len(base) > 1:
        kind = 0
    elif base[:1].isupper():
        kind = 1
    else:
        kind = 2
    return kind, name


def sort_imports(lines: Iterable[str]) -> list[str]:
    """The import statements of `lines`, merged and ordered, blank strings between sections."""
    straight: set[str] = set()
    plain: dict[str, set[str]] = {}
    aliased: set[tuple[str, str]] = set()
    for line in lines:
        if match := _IMPORT.match(line):
            straight.add(match.group(1))
            continue
        match = _FROM.match(line)
        if match is None:
            raise ValueError(f"not an import: {line!r}")
        module, names = match.groups()
        for name in (n.strip() for n in names.split(",")):
            if " as " in name:
                aliased.add((module, name))
            else:
                plain.setdefault(module, set()).add(name)
    statements: list[tuple[int, int, tuple[int, str], str, str]] = []
    for module in straight:
        statements.append((_section(module), 0, _module_key(module), "", f"import {module}"))
    for module, names in plain.items():
        joined = ", ".join(sorted(names, key=_name_key))
        line = f"from {module} import {joined}"
        statements.append((_section(module), 1, _module_key(module), "", line))
    for module, name in aliased:
        line = f"from {module} import {name}"
        statements.append((_section(module), 1, _module_key(module), name, line))
    out: list[str] = []
    previous: int | None = None
    for section, *_, line in sorted(statements):
        if previous is not None and section != previous:
            out.append("")
        out.append(line)
        previous = section
    return out

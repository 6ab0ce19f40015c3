"""Who may ask an extension's field: its declaration's guard, a function, a spec pattern's
generated guard (`may_run_<pattern>` in the package's authz.py) or none when it is public,
asked with the caller and, by keyword, the field's arguments or its parent's attributes its
parameters name; a refusal is FORBIDDEN. The table's own code (no caller) is not asked."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from types import ModuleType
from typing import Any

from graphql import GraphQLField, GraphQLObjectType, GraphQLResolveInfo

from keygraph.errors import Forbidden
from keygraph.execution.plan import ORIGIN

from .extension import Declared, GuardFunction

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
Check = Callable[[Any, GraphQLResolveInfo[Any], dict[str, Any]], None]
"""Asks a field's guard with its parent, info and arguments; raises Forbidden to refuse."""


def snake(name: str) -> str:
    """wordCount -> word_count: the name a field's argument is given to its resolver by."""
    return _CAMEL_BOUNDARY.sub("_", name).lower()


def guard_check(
    coordinate: str,
    owner: GraphQLObjectType,
    field: GraphQLField,
    declared: Declared,
    authz: ModuleType | None,
    problems: list[str],
) -> Check:
    """What asks the field's guard; in `problems`, what keeps it from being asked."""
    guard = _guard(coordinate, declared, authz, problems)
    owners: tuple[tuple[str, bool], ...] = ()
    if guard is not None:
        owners = _owners(coordinate, guard, owner, field, problems)
    return _checker(coordinate, guard, owners)


def _guard(
    coordinate: str, declared: Declared, authz: ModuleType | None, problems: list[str]
) -> GuardFunction | None:
    """The function deciding who may ask the field (None: anyone, when it is public)."""
    guard = declared.guard
    if declared.public:
        if guard is not None:
            problems.append(f"{coordinate}: both a guard and public=True")
        return None
    if guard is None:
        problems.append(f"{coordinate}: no guard (give guard=... or public=True)")
        return None
    if not isinstance(guard, str):
        return guard
    found = None if authz is None else getattr(authz, f"may_run_{guard}", None)
    if found is None:
        problems.append(f"{coordinate}: guard {guard!r} names no pattern of the spec")
    return found


def _owners(
    coordinate: str,
    guard: GuardFunction,
    owner: GraphQLObjectType,
    field: GraphQLField,
    problems: list[str],
) -> tuple[tuple[str, bool], ...]:
    """What the guard is asked with after the caller: each name it takes, and whether the
    field's arguments give it (else the parent's attribute does)."""
    arguments = {snake(name) for name in field.args}
    model = (owner.extensions or {}).get(ORIGIN)
    attributes = set(getattr(model, "model_fields", ()))
    names: list[tuple[str, bool]] = []
    for parameter in list(inspect.signature(guard).parameters.values())[1:]:
        if parameter.kind is parameter.VAR_KEYWORD:
            names += [(name, True) for name in sorted(arguments)]
        elif parameter.name in arguments or parameter.name in attributes:
            names.append((parameter.name, parameter.name in arguments))
        elif parameter.default is parameter.empty:
            message = f"{coordinate}: its guard takes {parameter.name}, which is neither an "
            problems.append(message + f"argument nor an attribute of {owner.name}")
    return tuple(names)


def _checker(
    coordinate: str, guard: GuardFunction | None, owners: tuple[tuple[str, bool], ...]
) -> Check:
    """Asks the guard (None: public) with the caller and what it names, the field's
    arguments or its parent's attributes; a refusal is FORBIDDEN. The table's own code (no
    caller) is not asked."""

    def check(source: Any, info: GraphQLResolveInfo[Any], given: dict[str, Any]) -> None:
        caller = info.context.session.caller
        if guard is None or caller is None:
            return
        asked = {
            name: given.get(name) if argument else getattr(source, name)
            for name, argument in owners
        }
        if not guard(caller, **asked):
            raise Forbidden(f"not allowed to ask {coordinate}")

    return check

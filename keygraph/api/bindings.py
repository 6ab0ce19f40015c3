"""What a generated package's `api.py` declares of its API (api.graphql): the function that
answers each root field with its arguments, the attribute each field of a type reads, how a
type's global id is made, and the enum classes. Codegen writes it; `executable` reads it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal

Operation = Literal["get", "batch_get", "query"]


@dataclass(frozen=True, slots=True)
class Arg:
    """A key argument: its GraphQL name, the function's parameter, and its GraphQL named
    type ("ID", "String", "Int", "Long", "DateTime", "Date", "Path" or an enum's)."""

    name: str
    param: str
    kind: str


@dataclass(frozen=True, slots=True)
class Root:
    """A root field and the generated function that answers it; `scoped`: whether it takes
    the caller's tenant first. A batch get's `args` are the parts of one key."""

    operation: Operation
    function: Callable[..., Awaitable[Any]]
    args: tuple[Arg, ...]
    scoped: bool = True


@dataclass(frozen=True, slots=True)
class Guard:
    """A field's read rule: the guard (generated/authz.py) asked with the caller and the
    attributes its owner conditions name, before the field answers."""

    function: Callable[..., bool]
    owners: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Type:
    """An object type and the model it shows: each GraphQL field's attribute; with a `get`,
    a Node whose global id holds the `node` parts of its key (none for a type with one item
    a tenant); the fields a rule guards."""

    model: type
    fields: dict[str, str]
    node: tuple[Arg, ...] = ()
    get: Callable[..., Awaitable[Any]] | None = None
    scoped: bool = True
    guards: dict[str, Guard] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class Api:
    """A generated package's API: its SDL and what answers it."""

    sdl: str
    roots: dict[str, Root]
    types: dict[str, Type]
    enums: dict[str, type[Enum]]

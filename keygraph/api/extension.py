"""An extension of a package's API: hand-written fields, types, mutations and subscriptions
for what its spec cannot say, as SDL (`extend type Query { ... }`, new types) and one
declaration per field, which alone says what answers it, what it costs, who may ask it and,
for a subscription, which of the spec's it follows (extend.py checks and binds them as the
schema is built)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from keygraph.paging import PageSize

Resolver = TypeVar("Resolver", bound=Callable[..., Any])
GuardFunction = Callable[..., bool]
"""Called with the caller, then by keyword with the field's arguments (snake_case) or the
parent's attributes its parameters name; False refuses the caller."""


@dataclass(frozen=True, slots=True)
class Declared:
    """One field of an extension: `Type.field`, its resolver (called with the parent, the
    info and the arguments in snake_case; sync or async), its bound when it answers a list
    of objects (`most` items, or a `page` sized by its `first` argument) and its guard: a
    function, a spec pattern's name whose generated guard applies, or `public`. A
    Subscription field's resolver is an async generator of its events, and `follows`
    names the spec subscriptions it opens with keygraph.api.changes. `ahead`: the read a
    field of a generated type makes, started from its parent's key with a root field's get
    of the parent (ahead.py)."""

    coordinate: str
    resolver: Callable[..., Any]
    most: int | None = None
    page: PageSize | None = None
    guard: GuardFunction | str | None = None
    public: bool = False
    follows: tuple[str, ...] = ()
    ahead: Callable[..., Any] | None = None


class Extension:
    """SDL extending a package's API, and the declaration of each field it adds."""

    def __init__(self, sdl: str) -> None:
        self.sdl = sdl
        self.declared: dict[str, Declared] = {}

    def field(
        self,
        coordinate: str,
        *,
        most: int | None = None,
        page: PageSize | None = None,
        guard: GuardFunction | str | None = None,
        public: bool = False,
        follows: str | Sequence[str] = (),
        ahead: Callable[..., Any] | None = None,
    ) -> Callable[[Resolver], Resolver]:
        """Declares the field `Type.field` of the SDL, answered by the decorated function
        (for a Subscription field, following the spec subscriptions `follows` names; for a
        field of a generated type, read `ahead` with a root field's get of its parent);
        ValueError for a field declared twice."""
        followed = (follows,) if isinstance(follows, str) else tuple(follows)

        def declare(resolver: Resolver) -> Resolver:
            if coordinate in self.declared:
                raise ValueError(f"{coordinate} is declared twice")
            declared = Declared(coordinate, resolver, most, page, guard, public, followed, ahead)
            self.declared[coordinate] = declared
            return resolver

        return declare


def combined(*extensions: Extension) -> Extension:
    """One extension of several, each kept in a module of its own: their SDL together and
    every field each declares; ValueError for a field two of them declare."""
    together = Extension("\n".join(extension.sdl for extension in extensions))
    for extension in extensions:
        for coordinate, declared in extension.declared.items():
            if coordinate in together.declared:
                raise ValueError(f"{coordinate} is declared twice")
            together.declared[coordinate] = declared
    return together

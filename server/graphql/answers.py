"""Answers a type computes when it builds an object, for fields that have a resolver: the
compiled executor answers such a field from the attribute its metadata names while that holds
a plain value, and calls the resolver otherwise (a refused read, say, whose resolver raises
FORBIDDEN). Strawberry's executor always calls the resolver, which must answer the same."""

from __future__ import annotations

from typing import Any, Final

ANSWERED_BY: Final = "keygraph.answered_by"


class Unanswered:
    """What an answer attribute holds when the resolver must answer."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "UNANSWERED"


UNANSWERED: Final = Unanswered()


def answered_by(attribute: str) -> dict[str, Any]:
    """A field's metadata naming the attribute that holds its answer."""
    return {ANSWERED_BY: attribute}

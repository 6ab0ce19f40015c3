"""A generated package's writes: each entity's item written with the claims, copies and
counts the spec says it keeps, its parents checked, in one transaction (bindings.py
declares them, run.py writes them)."""

from .bindings import Count, Derived, Owned, Parent, Removal, Writes
from .run import create, delete, items_of, sweep, update

__all__ = [
    "Count",
    "Derived",
    "Owned",
    "Parent",
    "Removal",
    "Writes",
    "create",
    "delete",
    "items_of",
    "sweep",
    "update",
]

"""A generated package's writes: each entity's item written with the claims, copies and
counts the spec says it keeps, its parents checked, in one transaction (bindings.py
declares them, run.py writes them)."""

from .bindings import Count, Derived, Parent, Writes
from .run import create, delete, items_of, update

__all__ = ["Count", "Derived", "Parent", "Writes", "create", "delete", "items_of", "update"]

"""A generated package's writes: each entity's item written with the claims, copies and
counts the spec says it keeps, in one transaction (bindings.py declares them, run.py
writes them)."""

from .bindings import Count, Derived, Writes
from .run import create, delete, update

__all__ = ["Count", "Derived", "Writes", "create", "delete", "update"]

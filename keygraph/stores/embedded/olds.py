"""The stored items a transaction's actions check their conditions on, or its updates build
on, read by one statement for the whole transaction."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from functools import cache

from keygraph.plan import Item, Update, WriteAction

from .values import item_of

_READ_ONE = "SELECT ?, body, plain FROM items WHERE pk = ? AND sk = ?"


def read_olds(
    conn: sqlite3.Connection, actions: Sequence[WriteAction], keys: list[tuple[str, str]]
) -> list[Item | None]:
    """The stored item of each action that needs it: those with conditions, and updates
    (None for the others, and where there is no item). `keys` are the actions' keys."""
    olds: list[Item | None] = [None] * len(actions)
    needed = [
        index
        for index, action in enumerate(actions)
        if action.conditions or isinstance(action, Update)
    ]
    if needed:
        params = [value for index in needed for value in (index, *keys[index])]
        for index, body, plain in conn.execute(_read_many(len(needed)), params):
            olds[index] = item_of(body, plain)
    return olds


@cache
def _read_many(count: int) -> str:
    """The statement reading `count` items by key, each row tagged with the number given
    with its key (a transaction reads at most 100)."""
    return " UNION ALL ".join([_READ_ONE] * count)

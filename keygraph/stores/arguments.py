"""What every store's constructor checks first: that it was given a table definition, since
each takes the table first and everything else by name."""

from __future__ import annotations

from keygraph.plan import TableDef


def require_table(store: str, table: object) -> None:
    """TypeError naming the call's shape when `table` is not a TableDef (such as a path
    passed first)."""
    if not isinstance(table, TableDef):
        raise TypeError(
            f"{store} takes the table definition first (the generated package's table.TABLE)"
            f" and everything else by name, e.g. {store}(TABLE, ...); got "
            f"{type(table).__name__} {table!r}"
        )

"""The embedded store: DynamoDB's operations and limits over one SQLite file (WAL).

Each thread gets its own connection, and writes serialise on the file's write lock
(connections.py). The async methods run the SQLite work inline: a point read or a small write takes
tens of microseconds, less than a hop to a worker thread would cost.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from decimal import Decimal
from pathlib import Path
from typing import Any, ClassVar

import orjson

from keygraph import capacity
from keygraph.errors import (
    CancelReason,
    ConditionFailed,
    IdempotentParameterMismatch,
    TransactionCanceled,
    ValidationError,
)
from keygraph.plan import (
    BatchGet,
    Check,
    Condition,
    Delete,
    Get,
    Item,
    Put,
    Query,
    QueryResult,
    Scan,
    TableDef,
    Update,
    WriteAction,
)

from ..arguments import require_table
from . import keyrange, reads, validate
from . import schema as sqlite_schema
from .conditions import encode_values, holds
from .connections import Connections
from .olds import read_olds
from .values import PLAIN, Wire, encode_item, item_of, plain_size, stored_body

TOKEN_WINDOW = 600.0
"""Seconds a transaction's ClientRequestToken is remembered, as DynamoDB does."""


@dataclass(frozen=True, slots=True)
class _Row:
    """An item encoded for the items table: its key and the INSERT's values."""

    key: tuple[str, str]
    values: list[Any]
    item: Item
    live: TableDef
    """The layout it was encoded for: a row encoded before the layout changed is encoded
    again when written."""


class EmbeddedStore:
    """The Store protocol over a SQLite file at `path` for the table `table`:
    `EmbeddedStore(TABLE, path="shop.sqlite3")` (the file and its directory are created).

    The indexes served are the file's own (`live`), as a DynamoDB table's are: `table` names
    the key attributes; indexes it adds or drops take a migration (`EmbeddedAdmin`). A
    change made by another connection or process is picked up at the next write, or the
    next query of an index (SQLite's schema version says when).
    """

    answers_inline: ClassVar[bool] = True
    """Its calls never wait for I/O, so callers may make a batch of them one after another."""

    def __init__(self, table: TableDef, *, path: str | Path) -> None:
        require_table(type(self).__name__, table)
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.table = table
        self._db = Connections(self.path)
        self._schema_version = -1
        self.live = table
        self._insert = ""
        conn = self._conn()
        sqlite_schema.ensure(conn, table)
        self._refresh(conn)

    def _refresh(self, conn: sqlite3.Connection) -> None:
        """Reload the live indexes when the file's schema has changed."""
        version: int = conn.execute("PRAGMA schema_version").fetchone()[0]
        if version != self._schema_version:
            indexes = sqlite_schema.live_indexes(conn, self.table)
            self.live = replace(self.table, indexes=indexes)
            self._insert = sqlite_schema.insert_statement(indexes)
            self._schema_version = version

    def _conn(self) -> sqlite3.Connection:
        return self._db.get()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._db.write() as conn:
            self._refresh(conn)
            yield conn

    def _read_row(self, conn: sqlite3.Connection, key: tuple[str, str]) -> tuple[str, int] | None:
        found: tuple[str, int] | None = conn.execute(
            "SELECT body, plain FROM items WHERE pk = ? AND sk = ?", key
        ).fetchone()
        return found

    def _read_item(self, conn: sqlite3.Connection, key: tuple[str, str]) -> Item | None:
        row = self._read_row(conn, key)
        return None if row is None else item_of(*row)

    def _row(self, item: Item) -> _Row:
        """The item validated and encoded once, as the row that stores it."""
        live = self.live
        size = plain_size(item)
        if size is None:
            wire, size = encode_item(item)
            key = validate.item(live, item, size)
            body, body_format = stored_body(wire, item)
        else:  # plain values: no DynamoDB JSON to build, the body is the item's JSON
            key = validate.item(live, item, size)
            body, body_format = orjson.dumps(item).decode(), PLAIN
        values: list[Any] = [*key, body, size, body_format]
        for index in live.indexes:
            values += sqlite_schema.index_values(index, item)
        return _Row(key, values, item, live)

    def _store(self, conn: sqlite3.Connection, row: _Row, transactional: bool = False) -> None:
        if row.live is not self.live:
            row = self._row(row.item)
        conn.execute(self._insert, row.values)
        capacity.add(write_units=capacity.write_units(row.values[3], transactional))

    # reads

    def _read_sized(
        self, conn: sqlite3.Connection, key: tuple[str, str]
    ) -> tuple[str, int, int] | None:
        found: tuple[str, int, int] | None = conn.execute(
            "SELECT body, plain, size FROM items WHERE pk = ? AND sk = ?", key
        ).fetchone()
        return found

    async def get(self, plan: Get) -> Item | None:
        key = validate.key(self.table, plan.key)
        row = self._read_sized(self._conn(), key)
        capacity.add(capacity.read_units(0 if row is None else row[2], plan.consistent))
        return None if row is None else item_of(row[0], row[1], plan.floats)

    async def batch_get(self, plan: BatchGet) -> list[Item]:
        validate.count("BatchGetItem", len(plan.keys), validate.BATCH_GET_LIMIT)
        keys = [validate.key(self.table, key) for key in plan.keys]
        validate.distinct(keys, "Provided list of item keys contains duplicates")
        values = [value for key in keys for value in key]
        rows = self._conn().execute(reads.point_reads(len(keys)), values).fetchall()
        capacity.add(capacity.batch_read_units([row[2] for row in rows], consistent=False))
        if plan.floats:
            return [item_of(body, plain, plan.floats) for body, plain, _ in rows]
        # a plain body is its item as JSON: decoded here, without a call per item
        return [
            orjson.loads(body) if plain == PLAIN else item_of(body, plain)
            for body, plain, _ in rows
        ]

    async def query(self, plan: Query) -> QueryResult:
        conn = self._conn()
        if plan.index is not None:
            self._refresh(conn)
        return reads.query(conn, self.table, self.live, plan)

    async def query_many(self, plans: Sequence[Query]) -> list[QueryResult]:
        """Each plan's `query` result, read in one statement: a wave of Queries (the cells
        of a geohash covering) costs one call into SQLite instead of one each."""
        conn = self._conn()
        if any(plan.index is not None for plan in plans):
            self._refresh(conn)
        return reads.queries(conn, self.table, self.live, plans)

    async def scan(self, plan: Scan) -> QueryResult:
        sql = keyrange.scan(self.table, plan)
        limit = plan.limit if plan.limit is not None else -1
        cursor = self._conn().execute(
            f"SELECT body, size, plain FROM items WHERE {sql.where} ORDER BY pk, sk LIMIT ?",
            [*sql.params, limit],
        )
        try:
            items, read, full = reads.page(cursor)
        finally:
            cursor.close()
        capacity.add(capacity.read_units(read, plan.consistent))
        last_key = None
        if items and (full or len(items) == plan.limit):
            last_key = self.table.primary_key(items[-1])
        return QueryResult(items, last_key)

    # writes

    async def put(self, plan: Put) -> None:
        row = self._row(plan.item)
        key = row.key
        values = encode_values(plan.conditions)
        with self._write() as conn:
            if plan.conditions:
                self._checked(conn, key, plan.conditions, values)
            self._store(conn, row)

    async def update(self, plan: Update) -> Item:
        key = validate.key(self.table, plan.key)
        validate.update(self.table, plan.set, plan.remove, plan.add)
        encode_item(plan.set)
        values = encode_values(plan.conditions)
        with self._write() as conn:
            item = self._updated(plan, self._checked(conn, key, plan.conditions, values))
            self._store(conn, self._row(item))
        return item

    def _checked(
        self,
        conn: sqlite3.Connection,
        key: tuple[str, str],
        conditions: Sequence[Condition],
        values: Sequence[Wire | None],
    ) -> Item | None:
        """The item at `key` (None: absent), once it meets `conditions`: ConditionFailed
        when it does not."""
        old = self._read_item(conn, key)
        if not holds(conditions, values, old):
            raise ConditionFailed("The conditional request failed", old)
        return old

    def _updated(self, plan: Update, old: Item | None) -> Item:
        item: Item = dict(old) if old is not None else dict(plan.key)
        item.update(plan.set)
        for name in plan.remove:
            item.pop(name, None)
        for name, amount in plan.add.items():
            current = item.get(name, 0)
            if isinstance(current, bool) or not isinstance(current, int | Decimal):
                raise ValidationError(
                    "An operand in the update expression has an incorrect data type"
                )
            item[name] = current + amount
        return item

    async def delete(self, plan: Delete) -> None:
        key = validate.key(self.table, plan.key)
        values = encode_values(plan.conditions)
        with self._write() as conn:
            if plan.conditions:
                self._checked(conn, key, plan.conditions, values)
            conn.execute("DELETE FROM items WHERE pk = ? AND sk = ?", key)
            capacity.add(write_units=capacity.write_units(0))

    async def batch_write(self, actions: Sequence[Put | Delete]) -> None:
        validate.count("BatchWriteItem", len(actions), validate.BATCH_WRITE_LIMIT)
        rows = self._rows(actions)
        keys = [self._action_key(action, row) for action, row in zip(actions, rows, strict=True)]
        if any(action.conditions for action in actions):
            raise ValidationError("BatchWriteItem does not take conditions")
        validate.distinct(keys, "Provided list of item keys contains duplicates")
        with self._write() as conn:
            for action, key, row in zip(actions, keys, rows, strict=True):
                self._apply(conn, action, key, None, row)

    async def transact_write(
        self, actions: Sequence[WriteAction], token: str | None = None
    ) -> None:
        validate.count("TransactWriteItems", len(actions), validate.TRANSACTION_LIMIT)
        digest = None if token is None else validate.client_token(token, actions)
        rows = self._rows(actions)
        # A row's values are pk, sk, body, size, then the index columns.
        validate.transaction_payload(actions, [0 if row is None else row.values[3] for row in rows])
        keys = [self._action_key(action, row) for action, row in zip(actions, rows, strict=True)]
        validate.distinct(
            keys, "Transaction request cannot include multiple operations on one item"
        )
        values = [encode_values(action.conditions) for action in actions]
        for action in actions:
            if isinstance(action, Update):
                validate.update(self.table, action.set, action.remove, action.add)
                encode_item(action.set)
            if isinstance(action, Check) and not action.conditions:
                raise ValidationError("A condition check needs a condition")
        with self._write() as conn:
            if token is not None and digest is not None and self._seen(conn, token, digest):
                return  # the same transaction again, inside its window: already written
            olds = read_olds(conn, actions, keys)
            held = [
                holds(action.conditions, vals, old)
                for action, vals, old in zip(actions, values, olds, strict=True)
            ]
            if not all(held):
                reasons = tuple(
                    CancelReason("None") if ok else CancelReason("ConditionalCheckFailed", old)
                    for ok, old in zip(held, olds, strict=True)
                )
                codes = ", ".join(reason.code for reason in reasons)
                raise TransactionCanceled(
                    "Transaction cancelled, please refer cancellation reasons for specific "
                    f"reasons [{codes}]",
                    reasons,
                )
            for action, key, old, row in zip(actions, keys, olds, rows, strict=True):
                self._apply(conn, action, key, old, row, transactional=True)
            if token is not None:
                conn.execute(
                    "INSERT OR REPLACE INTO tokens (token, digest, at) VALUES (?, ?, ?)",
                    (token, digest, time.time()),
                )

    def _seen(self, conn: sqlite3.Connection, token: str, digest: str) -> bool:
        """Whether a transaction with this token was written inside the window (True), or
        not (False); IdempotentParameterMismatch when it had other actions."""
        conn.execute("DELETE FROM tokens WHERE at < ?", (time.time() - TOKEN_WINDOW,))
        found = conn.execute("SELECT digest FROM tokens WHERE token = ?", (token,)).fetchone()
        if found is None:
            return False
        if found[0] != digest:
            raise IdempotentParameterMismatch(
                "IdempotentParameterMismatch: the ClientRequestToken was used for another "
                "transaction"
            )
        return True

    def _rows(self, actions: Sequence[WriteAction]) -> list[_Row | None]:
        """Each Put's row, encoded before the write lock is taken."""
        return [self._row(a.item) if isinstance(a, Put) else None for a in actions]

    def _action_key(self, action: WriteAction, row: _Row | None) -> tuple[str, str]:
        if isinstance(action, Put):
            assert row is not None
            return row.key
        return validate.key(self.table, action.key)

    def _apply(
        self,
        conn: sqlite3.Connection,
        action: WriteAction,
        key: tuple[str, str],
        old: Item | None,
        row: _Row | None,
        transactional: bool = False,
    ) -> None:
        if row is not None:
            self._store(conn, row, transactional)
        elif isinstance(action, Update):
            self._store(conn, self._row(self._updated(action, old)), transactional)
        elif isinstance(action, Delete):
            conn.execute("DELETE FROM items WHERE pk = ? AND sk = ?", key)
            capacity.add(write_units=capacity.write_units(0, transactional))

    async def close(self) -> None:
        self._db.close()

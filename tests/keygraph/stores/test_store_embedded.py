"""The embedded store's own guarantees: concurrent threads, a kill -9 in the middle of a
transaction, a file opened with a changed set of GSIs, and a file from before plain bodies."""

from __future__ import annotations

import asyncio
import dataclasses
import json
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from decimal import Decimal
from pathlib import Path

import pytest

from keygraph.errors import ConditionFailed, ValidationError
from keygraph.plan import Condition, Get, Put, Query, Update
from keygraph.stores.embedded import validate
from keygraph.stores.embedded.store import EmbeddedStore
from testkit.stores import TEST_TABLE

WRITER = """
import asyncio, sys
from keygraph.plan import Put
from keygraph.stores.embedded.store import EmbeddedStore
from testkit.stores import TEST_TABLE

async def main() -> None:
    store = EmbeddedStore(TEST_TABLE, path=sys.argv[1])
    generation = int(sys.argv[2])
    while True:
        generation += 1
        await store.transact_write(
            [Put({"PK": "tx", "SK": f"{i:03}", "gen": generation, "pad": "x" * 3000,
                  "GSI1PK": "all", "GSI1SK": f"{i:03}"}) for i in range(100)]
        )
        print(generation, flush=True)

asyncio.run(main())
"""


async def generations(path: Path) -> list[int]:
    store = EmbeddedStore(TEST_TABLE, path=path)
    table = await store.query(Query("tx"))
    index = await store.query(Query("all", index="GSI1"))
    await store.close()
    assert [i["gen"] for i in table.items] == [i["gen"] for i in index.items]
    return [item["gen"] for item in table.items]


def test_kill_9_mid_transaction_leaves_all_or_nothing(tmp_path: Path) -> None:
    path = tmp_path / "killed.sqlite3"
    committed = 0
    for round_ in range(3):
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(path), str(committed)],
            stdout=subprocess.PIPE,
            text=True,
        )
        assert writer.stdout is not None
        first = int(writer.stdout.readline())  # at least one transaction is in
        time.sleep(random.uniform(0.01, 0.2))
        writer.send_signal(signal.SIGKILL)
        writer.wait()
        writer.stdout.close()
        found = asyncio.run(generations(path))
        assert len(found) == 100, f"round {round_}: a partial transaction is visible"
        assert len(set(found)) == 1, f"round {round_}: generations mixed: {sorted(set(found))}"
        assert found[0] >= first
        committed = found[0]


async def test_threads_share_a_store_safely(tmp_path: Path) -> None:
    store = EmbeddedStore(TEST_TABLE, path=tmp_path / "threads.sqlite3")
    counter = {"PK": "c", "SK": "counter"}
    await store.put(Put({**counter, "version": 0}))
    threads, increments = 4, 25
    conflicts = [0] * threads

    def worker(n: int) -> None:
        async def run() -> None:
            for i in range(increments):
                await store.put(Put({"PK": "c", "SK": f"t{n}-{i}"}))
                while True:
                    current = await store.get(Get(counter))
                    assert current is not None
                    version = current["version"]
                    try:
                        await store.update(
                            Update(
                                counter,
                                {"version": version + 1},
                                conditions=(Condition("equals", "version", version),),
                            )
                        )
                        break
                    except ConditionFailed:
                        conflicts[n] += 1

        asyncio.run(run())

    pool = [threading.Thread(target=worker, args=(n,)) for n in range(threads)]
    for thread in pool:
        thread.start()
    for thread in pool:
        thread.join()
    final = await store.get(Get(counter))
    assert final is not None
    assert final["version"] == threads * increments
    rows = await store.query(Query("c"))
    assert len(rows.items) == threads * increments + 1
    await store.close()


async def test_reopening_under_a_new_definition_keeps_the_files_indexes(tmp_path: Path) -> None:
    path = tmp_path / "evolve.sqlite3"
    without_sparse = dataclasses.replace(TEST_TABLE, indexes=TEST_TABLE.indexes[:1])
    store = EmbeddedStore(without_sparse, path=path)
    await store.put(Put({"PK": "e", "SK": "1", "SPK": "open", "SSK": "a", "status": "new"}))
    await store.close()
    store = EmbeddedStore(TEST_TABLE, path=path)
    with pytest.raises(ValidationError, match="does not have the specified index"):
        await store.query(Query("open", index="Sparse"))  # as DynamoDB: migrate to add it
    assert [i.name for i in store.live.indexes] == ["GSI1"]
    await store.close()


async def test_bodies_are_plain_json_unless_a_value_needs_dynamodb_json(tmp_path: Path) -> None:
    store = EmbeddedStore(TEST_TABLE, path=tmp_path / "s.sqlite3")
    await store.put(Put({"PK": "p", "SK": "plain", "n": 5, "tags": ["a", None, True]}))
    await store.put(Put({"PK": "p", "SK": "fractions", "price": Decimal("1.25")}))
    await store.put(Put({"PK": "p", "SK": "wire", "prices": [Decimal("1.25")]}))
    price = (await store.get(Get({"PK": "p", "SK": "fractions"})) or {})["price"]
    await store.close()
    with sqlite3.connect(tmp_path / "s.sqlite3") as conn:
        rows = dict(conn.execute("SELECT sk, plain FROM items WHERE pk = 'p'").fetchall())
        body = conn.execute("SELECT body FROM items WHERE sk = 'plain'").fetchone()[0]
        fractions = conn.execute("SELECT body FROM items WHERE sk = 'fractions'").fetchone()[0]
    assert rows == {"plain": 1, "fractions": 2, "wire": 0}
    assert json.loads(body) == {"PK": "p", "SK": "plain", "n": 5, "tags": ["a", None, True]}
    assert json.loads(fractions) == {"PK": "p", "SK": "fractions", "price": 1.25}
    assert repr(price) == "Decimal('1.25')"


async def test_a_file_from_before_plain_bodies_opens_reads_and_writes(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite3"
    fresh = EmbeddedStore(TEST_TABLE, path=tmp_path / "fresh.sqlite3")
    await fresh.close()
    layout = json.dumps({i.name: [i.partition_key, i.sort_key] for i in TEST_TABLE.indexes})
    with sqlite3.connect(tmp_path / "fresh.sqlite3") as conn:
        gsi_columns = [r[1] for r in conn.execute("PRAGMA table_info(items)")][5:]
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID")
        conn.execute("INSERT INTO meta VALUES ('gsi_layout', ?)", (layout,))
        columns = "".join(f', "{c}" TEXT' for c in gsi_columns)
        conn.execute(
            "CREATE TABLE items (pk TEXT NOT NULL, sk TEXT NOT NULL, body TEXT NOT NULL,"
            f" size INTEGER NOT NULL{columns}, PRIMARY KEY (pk, sk)) WITHOUT ROWID"
        )
        wire = {"PK": {"S": "p"}, "SK": {"S": "old"}, "n": {"N": "7"}}
        conn.execute(
            "INSERT INTO items (pk, sk, body, size) VALUES ('p', 'old', ?, 10)", (json.dumps(wire),)
        )
    store = EmbeddedStore(TEST_TABLE, path=path)
    assert await store.get(Get({"PK": "p", "SK": "old"})) == {"PK": "p", "SK": "old", "n": 7}
    updated = await store.update(
        Update({"PK": "p", "SK": "old"}, set={"m": 1}, conditions=(Condition("equals", "n", 7),))
    )
    assert updated == {"PK": "p", "SK": "old", "n": 7, "m": 1}
    assert await store.get(Get({"PK": "p", "SK": "old"})) == updated
    await store.close()


async def test_a_transaction_without_a_token_is_not_digested(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The digest (a repr of every action) only serves to recognise a token's transaction."""

    def refused(*_: object) -> str:
        raise AssertionError("digested")

    store = EmbeddedStore(TEST_TABLE, path=tmp_path / "t.sqlite3")
    monkeypatch.setattr(validate, "client_token", refused)
    await store.transact_write([Put({"PK": "a", "SK": "1"})])
    assert await store.get(Get({"PK": "a", "SK": "1"})) == {"PK": "a", "SK": "1"}
    await store.close()

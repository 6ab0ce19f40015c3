"""How fast a live table follows its spec: `table plan` and the backfill of `table migrate`,
against a plain PutItem loop writing the same items, side by side on the same store.

The data is the library of tests/keygraph/migrate (v1: an author's books newest first; v2:
books by title, and a new index over every book's genre): one tenant of N books written
under v1, then planned and migrated to v2. Prints one JSON object; bench/README.md records
it. `python -m bench migrate --help` for the flags.
"""

from __future__ import annotations

import asyncio
import dataclasses
import importlib
import json
import sys
import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import ModuleType
from typing import Any

from bench import harness
from bench.machine import machine_info
from codegen import output, pipeline
from keygraph.migrate.plan import make_plan
from keygraph.migrate.run import migrate
from keygraph.migrate.target import Target
from keygraph.plan import Put, TableDef
from keygraph.store import Store
from keygraph.stores import admin_of
from keygraph.stores.dynamodb.local import (
    LOCAL_KEY_ID,
    LOCAL_REGION,
    LOCAL_SECRET,
    DynamoDBLocal,
)
from keygraph.stores.dynamodb.store import DynamoDBStore
from keygraph.stores.embedded.store import EmbeddedStore

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "tests" / "keygraph" / "migrate"
T0 = datetime(2024, 1, 1, tzinfo=UTC)
BATCH = 25


def packages(root: Path) -> tuple[ModuleType, ModuleType]:
    """The library's v1 and v2 packages, generated under `root` and imported."""
    for version in ("v1", "v2"):
        spec = SPECS / f"spec_{version}.toml"
        files = pipeline.generate(spec.read_text(), spec.name)
        output.write(files, root / f"bench_library_{version}")
    sys.path.insert(0, str(root))
    return (
        importlib.import_module("bench_library_v1"),
        importlib.import_module("bench_library_v2"),
    )


def books(pkg: ModuleType, count: int) -> list[dict[str, Any]]:
    book = importlib.import_module(f"{pkg.__name__}.models.book").Book
    genre = importlib.import_module(f"{pkg.__name__}.models.enums").BookGenre
    genres = list(genre)
    return [
        book(
            book_id=f"b{n:07d}",
            author_id=f"a{n % 500}",
            title=f"Title {(n * 7919) % count:07d}",
            genre=genres[n % len(genres)],
            published=T0 + timedelta(minutes=n),
            version=1,
        ).to_item("acme")
        for n in range(count)
    ]


async def load(store: Store, items: list[dict[str, Any]]) -> None:
    for offset in range(0, len(items), BATCH):
        await store.batch_write([Put(item) for item in items[offset : offset + BATCH]])


async def put_loop(store: Store, items: list[dict[str, Any]]) -> float:
    """Items a second a plain loop of PutItem calls writes, one after another."""
    started = time.perf_counter()
    for item in items:
        await store.put(Put(item))
    return len(items) / (time.perf_counter() - started)


def local_store(table: TableDef, local: DynamoDBLocal) -> DynamoDBStore:
    return DynamoDBStore(
        table,
        endpoint_url=local.endpoint_url,
        region=LOCAL_REGION,
        access_key_id=LOCAL_KEY_ID,
        secret_access_key=LOCAL_SECRET,
    )


def target_of(pkg: ModuleType, table_name: str) -> Target:
    table = importlib.import_module(f"{pkg.__name__}.table").TABLE
    entities = importlib.import_module(f"{pkg.__name__}.entities")
    return Target(
        dataclasses.replace(table, name=table_name),
        entities.ENTITIES,
        entities.FINGERPRINT,
        entities.TENANT_PREFIXES,
    )


async def measure(kind: str, v1: ModuleType, v2: ModuleType, count: int, work: Path) -> Any:
    table1 = importlib.import_module(f"{v1.__name__}.table").TABLE
    table2 = importlib.import_module(f"{v2.__name__}.table").TABLE
    local: DynamoDBLocal | None = None
    if kind == "embedded":
        store: Store = EmbeddedStore(table1, path=work / "migrate.sqlite3")
        reference: Store = EmbeddedStore(table2, path=work / "puts.sqlite3")
    else:
        local = DynamoDBLocal()
        local.start()
        store = local_store(table1, local)
        admin_of(store).create_table()
        reference = local_store(dataclasses.replace(table2, name="puts"), local)
        admin_of(reference).create_table()
    try:
        started = time.perf_counter()
        await load(store, books(v1, count))
        loaded = time.perf_counter() - started
        puts = await put_loop(reference, books(v2, min(count, 20_000)))
        await store.close()
        migrating = (
            local_store(table2, local)
            if local is not None
            else EmbeddedStore(table2, path=work / "migrate.sqlite3")
        )
        target = target_of(v2, table2.name)
        admin = admin_of(migrating)
        plan = await make_plan(target, migrating, admin, kind, tenant="acme")
        report = await migrate(plan, target, migrating, admin)
        await migrating.close()
        await reference.close()
    finally:
        if local is not None:
            local.stop()
    updated = sum(report.updated.values())
    rate = updated / report.seconds
    return {
        "store": kind,
        "items": count,
        "load_seconds": round(loaded, 2),
        "plan_seconds": round(plan.seconds, 2),
        "plan_to_update": plan.to_update,
        "migrate_seconds": round(report.seconds, 2),
        "backfill_items_per_second": round(rate),
        "backfill_ms_per_item": round(1000 / rate, 3),
        "put_loop_items_per_second": round(puts),
        "put_loop_ms_per_item": round(1000 / puts, 3),
        "backfill_over_put_loop": round(rate / puts, 2),
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.parser("migrate", __doc__)
    parser.add_argument("--store", choices=("embedded", "dynamodb-local"), default="embedded")
    parser.add_argument("--items", type=int, default=100_000, help="books (default 100,000)")
    parser.add_argument("--out", type=Path, help="default bench/results/migrate-<store>.json")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="keygraph-migrate-bench-") as tmp:
        v1, v2 = packages(Path(tmp) / "packages")
        result = asyncio.run(measure(args.store, v1, v2, args.items, Path(tmp)))
    text = json.dumps({**result, "machine": machine_info()}, indent=2) + "\n"
    out = args.out or Path(__file__).with_name("results") / f"migrate-{args.store}.json"
    out.write_text(text)
    print(text, end="")

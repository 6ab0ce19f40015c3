"""Migrating a live table from one spec to the next, on both stores: data written under v1;
v2 adds an index over attributes every book has and changes an index's sort key; plan,
migrate, and every v2 pattern answers as a fresh load under v2 does. A migration killed
mid-way resumes to the same result, writes made meanwhile are kept, a second run writes
nothing, and what cannot be done online is refused."""

from __future__ import annotations

import asyncio
import dataclasses
import signal
import sys
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from keygraph.cursor import CursorCodec
from keygraph.migrate import plan as plan_module
from keygraph.migrate.plan import IndexStep, make_plan
from keygraph.migrate.run import Checkpoint, migrate
from keygraph.migrate.target import Target
from keygraph.plan import Put
from keygraph.store import Session, Store
from keygraph.stores import admin_of
from keygraph.stores.dynamodb.store import DynamoDBStore
from keygraph.stores.embedded.store import EmbeddedStore
from tests.conftest import StoreFactory
from tests.packages import Importer
from tests.waiting import eventually

HERE = Path(__file__).parent
T0 = datetime(2024, 1, 1, tzinfo=UTC)
GENRES = ("NOVEL", "POETRY", "ESSAY")
AUTHORS = 4
BOOKS = 60


def short(kind: str) -> str:
    """The store kind a plan names: embedded or dynamodb."""
    return "embedded" if kind == "embedded" else "dynamodb"


def target_of(pkg: Importer, store: Store) -> Target:
    entities = pkg("entities")
    table = dataclasses.replace(pkg("table").TABLE, name=_table_of(store).name)
    return Target(table, entities.ENTITIES, entities.FINGERPRINT, entities.TENANT_PREFIXES)


def _table_of(store: Store) -> Any:
    return store.table  # type: ignore[attr-defined]


def reopen(store: Store, pkg: Importer, dynamodb_client: Any = None) -> Store:
    """A store of the same data as `store`, run by the code of `pkg`'s spec."""
    table = dataclasses.replace(pkg("table").TABLE, name=_table_of(store).name)
    if isinstance(store, EmbeddedStore):
        return EmbeddedStore(table, path=store.path)
    assert isinstance(store, DynamoDBStore)
    return DynamoDBStore(table, client=dynamodb_client, max_concurrency=8)


def library(pkg: Importer, tenant: str) -> list[dict[str, Any]]:
    """The same authors and books under any spec version: their stored items."""
    author, book = pkg("models.author").Author, pkg("models.book").Book
    genre = pkg("models.enums").BookGenre
    items = [author(author_id=f"a{n}", name=f"Author {n}").to_item(tenant) for n in range(AUTHORS)]
    for n in range(BOOKS):
        items.append(
            book(
                book_id=f"b{n:03d}",
                author_id=f"a{n % AUTHORS}",
                title=f"Title {(n * 37) % BOOKS:03d}",
                genre=genre(GENRES[n % 3]),
                published=T0 + timedelta(days=n),
                version=1,
            ).to_item(tenant)
        )
    return items


async def answers(pkg: Importer, store: Store, tenant: str) -> dict[str, Any]:
    """What every v2 pattern answers for the tenant, all pages."""
    session = Session(store, CursorCodec(b"k" * 32))
    books, authors = pkg("queries.book"), pkg("queries.author")
    genre = pkg("models.enums").BookGenre
    found: dict[str, Any] = {}

    async def pages(run: Any, *args: Any) -> list[Any]:
        out: list[Any] = []
        after = None
        while True:
            page = await run(session, tenant, *args, first=7, after=after)
            out += [item.model_dump() for item in page.items]
            if not page.has_next:
                return out
            after = page.cursor

    for n in range(AUTHORS):
        author = await authors.get_author(session, tenant, f"a{n}")
        found[f"author a{n}"] = author and author.model_dump()
        found[f"books of a{n}"] = await pages(books.author_books, f"a{n}")
    for name in GENRES:
        found[f"genre {name}"] = await pages(books.books_by_genre, genre(name))
    for n in range(0, BOOKS, 7):
        book = await books.get_book(session, tenant, f"b{n:03d}")
        found[f"book b{n:03d}"] = book and book.model_dump()
    return found


@pytest.fixture
async def loaded(store_factory: StoreFactory, kind: str, v1: Importer) -> Store:
    """A v1 table holding the library of two tenants."""
    store = await store_factory(kind, v1("table").TABLE)
    for tenant in ("acme", "globex"):
        for item in library(v1, tenant):
            await store.put(Put(item))
    return store


@pytest.fixture
def client(request: pytest.FixtureRequest, kind: str) -> Any:
    return request.getfixturevalue("dynamodb_client") if kind == "dynamodb-local" else None


async def reference(store_factory: StoreFactory, kind: str, v2: Importer) -> dict[str, Any]:
    """What v2 answers on a fresh load of the same library."""
    fresh = await store_factory(kind, v2("table").TABLE)
    for item in library(v2, "acme"):
        await fresh.put(Put(item))
    return await answers(v2, fresh, "acme")


async def test_plan_then_migrate_answers_as_a_fresh_load(
    loaded: Store, store_factory: StoreFactory, kind: str, v2: Importer, client: Any
) -> None:
    store = reopen(loaded, v2, client)
    target = target_of(v2, store)
    admin = admin_of(store)
    plan = await make_plan(target, store, admin, short(kind))
    assert plan.refused == []
    assert plan.steps == [IndexStep("create", v2("table").TABLE.index("GSI2"))]
    assert plan.backfill["Book"].to_update == 2 * BOOKS
    assert plan.backfill["Book"].attributes == {"GSI1SK", "GSI2PK", "GSI2SK"}
    assert plan.backfill["Author"].to_update == 0
    assert "backfill Book: 120 of 120 items" in plan.render()
    report = await migrate(plan, target, store, admin)
    assert report.updated == {"Book": 2 * BOOKS}
    assert await answers(v2, store, "acme") == await reference(store_factory, kind, v2)
    again = await make_plan(target, store, admin, short(kind))
    assert again.empty
    second = await migrate(again, target, store, admin)
    assert (second.updated, second.scanned) == ({}, 2 * (AUTHORS + BOOKS))
    await _close(store, loaded)


async def test_one_tenant_at_a_time(loaded: Store, kind: str, v2: Importer, client: Any) -> None:
    store = reopen(loaded, v2, client)
    target, admin = target_of(v2, store), admin_of(store)
    plan = await make_plan(target, store, admin, short(kind), tenant="acme")
    assert plan.scanned == AUTHORS + BOOKS
    await migrate(plan, target, store, admin)
    other = await make_plan(target, store, admin, short(kind), tenant="globex")
    assert other.backfill["Book"].to_update == BOOKS  # untouched by acme's migration
    assert (await make_plan(target, store, admin, short(kind), tenant="acme")).empty
    await _close(store, loaded)


async def test_writes_made_during_a_migration_are_kept(
    loaded: Store,
    store_factory: StoreFactory,
    kind: str,
    v2: Importer,
    client: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(plan_module, "PAGE", 10)
    store = reopen(loaded, v2, client)
    target, admin = target_of(v2, store), admin_of(store)
    plan = await make_plan(target, store, admin, short(kind), tenant="acme")
    session = Session(store, CursorCodec(b"k" * 32))
    written: list[dict[str, Any]] = []

    async def writer() -> None:
        # the new spec's code retitles books while the backfill runs
        for n in range(0, BOOKS, 5):
            old = await v2("queries.book").get_book(session, "acme", f"b{n:03d}")
            changed = old.model_copy(
                update={"title": f"Renamed {n:03d}", "version": old.version + 1}
            )
            await store.put(Put(changed.to_item("acme")))
            written.append(changed.model_dump())
            await asyncio.sleep(0)

    await asyncio.gather(migrate(plan, target, store, admin, max_writes_per_second=400), writer())
    assert len(written) == BOOKS // 5
    for expected in written:
        found = await v2("queries.book").get_book(session, "acme", expected["book_id"])
        assert found.model_dump() == expected  # the newer write won
    assert (await make_plan(target, store, admin, short(kind), tenant="acme")).empty
    by_title = await v2("queries.book").author_books(session, "acme", "a0", first=100)
    titles = [b.title for b in by_title.items]
    assert titles == sorted(titles)  # every book, old or rewritten, in the new order
    await _close(store, loaded)


KILLED = textwrap.dedent(
    """
    import asyncio, sys
    sys.path.insert(0, {root!r})
    from keygraph.migrate import plan as plan_module
    from keygraph.migrate.plan import make_plan
    from keygraph.migrate.run import migrate
    from keygraph.migrate.target import load_target
    from keygraph.stores import admin_of
    plan_module.PAGE = 10
    target = load_target("library_v2", {table!r})
    if {path!r}:
        from keygraph.stores.embedded.store import EmbeddedStore
        store = EmbeddedStore(target.table, path={path!r})
    else:
        from keygraph.stores.dynamodb.store import DynamoDBStore
        store = DynamoDBStore(
            target.table, endpoint_url={endpoint!r}, region="us-east-1",
            access_key_id="local", secret_access_key="local",
        )

    async def main():
        plan = await make_plan(target, store, admin_of(store), {kind!r})
        await migrate(plan, target, store, admin_of(store), max_writes_per_second=30)

    asyncio.run(main())
    """
)


async def test_a_killed_migration_resumes_to_the_same_result(
    loaded: Store, store_factory: StoreFactory, kind: str, v2: Importer, client: Any
) -> None:
    store = reopen(loaded, v2, client)
    target, admin = target_of(v2, store), admin_of(store)
    code = KILLED.format(
        root=str(Path(str(v2("table").__file__)).parents[1]),
        table=target.table.name,
        path=str(store.path) if isinstance(store, EmbeddedStore) else "",
        endpoint=client.meta.endpoint_url if client is not None else "",
        kind=short(kind),
    )
    child = await asyncio.create_subprocess_exec(
        sys.executable, "-c", code, cwd=Path(__file__).parents[3]
    )
    checkpoint = Checkpoint(store, target, None)

    async def under_way() -> bool:
        assert child.returncode is None, "the migration ended before it could be killed"
        scanned: int = (await checkpoint.load()).get("scanned", 0)
        return scanned >= 20

    try:
        await eventually(under_way, "the migration to checkpoint 20 items", seconds=120)
    finally:
        child.send_signal(signal.SIGKILL)
        await child.wait()
    state = await checkpoint.load()
    assert not state.get("done")
    plan = await make_plan(target, store, admin, short(kind))
    assert plan.steps == []  # the index was created before the kill
    report = await migrate(plan, target, store, admin)
    assert report.resumed_at == state["scanned"]
    assert report.scanned == 2 * (AUTHORS + BOOKS)
    assert await answers(v2, store, "acme") == await reference(store_factory, kind, v2)
    assert (await make_plan(target, store, admin, short(kind))).empty
    await _close(store, loaded)


async def _close(store: Store, loaded: Store) -> None:
    if store is not loaded:
        await store.close()

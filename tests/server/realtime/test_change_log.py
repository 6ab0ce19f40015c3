"""End to end on each store's own change stream (no test double): the embedded store's
change log and DynamoDB Local's Streams. A mutation over HTTP and a write made outside
GraphQL, straight to the store, each reach a subscriber; a resume by cursor replays from
the stream."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from dataclasses import replace

import pytest
from starlette.applications import Starlette

from generated.models.user import User as UserModel
from generated.queries.user import get_user
from generated.table import TABLE
from keygraph.cursor import CursorCodec
from keygraph.plan import Put
from keygraph.store import Session, Store
from server.settings import Settings
from tests.conftest import StoreFactory
from tests.ids import local_id
from tests.server.conftest import Api
from tests.server.realtime.conftest import Connect, settle, spec_app, subscribe
from tests.server.realtime.test_fields import ORDERS, USER, event
from tests.server.realtime.test_resume import skus

LAG = {"embedded": 0.0, "dynamodb-local": 1.0}
"""Seconds more a change may take to appear in the stream (DynamoDB Local adds a record a
moment after answering the write)."""


@pytest.fixture
async def store(kind: str, store_factory: StoreFactory) -> Store:
    return await store_factory(kind, TABLE)


@pytest.fixture
async def app(settings: Settings, store: Store, kind: str) -> AsyncIterator[Starlette]:
    polled = replace(settings, stream_poll_interval=0.01 if kind == "embedded" else 0.05)
    built = spec_app(polled, store)
    async with built.router.lifespan_context(built):
        yield built


async def caught_up(kind: str) -> None:
    """The reader has read what was written so far."""
    await settle()
    await asyncio.sleep(LAG[kind])


async def test_a_mutation_over_http_reaches_a_subscriber(
    connect: Connect, acme: Api, kind: str
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await caught_up(kind)
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"]})
        await caught_up(kind)
        order = await acme.create_order(bob["id"], [("A-1", 3, 100)])
        change = (await event(ws))["data"]["orderChanged"]
        assert (change["change"], change["order"]["id"]) == ("CREATED", order["id"])
        assert change["order"]["totalCents"] == 300


async def test_a_write_outside_graphql_reaches_a_subscriber(
    connect: Connect, acme: Api, store: Store, kind: str
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await caught_up(kind)
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", USER, {"id": bob["id"]})
        await caught_up(kind)
        session = Session(store, CursorCodec(b"k" * 32))
        model = await get_user(session, "acme", local_id(bob["id"], "User"), consistent=True)
        assert isinstance(model, UserModel)
        renamed = model.model_copy(update={"name": "Robert", "version": model.version + 1})
        await store.put(Put(item=renamed.to_item("acme")))  # a script's direct write
        change = (await event(ws))["data"]["userChanged"]
        assert change["change"] == "UPDATED"
        assert change["user"]["name"] == "Robert"


async def test_a_resume_replays_from_the_stream(connect: Connect, acme: Api, kind: str) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await caught_up(kind)
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"]})
        await caught_up(kind)
        await acme.create_order(bob["id"], [("A", 1, 100)])
        cursor = (await event(ws))["data"]["orderChanged"]["cursor"]
    for sku in ("B", "C"):
        await acme.create_order(bob["id"], [(sku, 1, 100)])
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"], "after": cursor})
        assert await skus(ws, 2) == ["B", "C"]

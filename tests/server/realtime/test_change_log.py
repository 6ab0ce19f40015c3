"""End to end on the embedded store's own change log (no test double): a mutation over
HTTP and a write made outside GraphQL, straight to the store, each reach a subscriber; a
resume by cursor replays from the log."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from generated.models.user import User as UserModel
from generated.queries.user import get_user
from keygraph.cursor import CursorCodec
from keygraph.plan import Put
from keygraph.store import Session
from keygraph.stores.embedded.store import EmbeddedStore
from server.edge.app import App, create_app
from server.graphql.ids import local_id
from server.settings import Settings
from tests.server.conftest import Api
from tests.server.realtime.conftest import Connect, settle, subscribe
from tests.server.realtime.test_fields import ORDERS, USER, event
from tests.server.realtime.test_resume import skus


@pytest.fixture
async def app(settings: Settings, store: EmbeddedStore) -> AsyncIterator[App]:
    built = create_app(settings, store)
    async with built.router.lifespan_context(built):
        yield built


async def test_a_mutation_over_http_reaches_a_subscriber(connect: Connect, acme: Api) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await settle()
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"]})
        await settle()
        order = await acme.create_order(bob["id"], [("A-1", 3, 100)])
        change = (await event(ws))["data"]["orderChanged"]
        assert (change["change"], change["order"]["id"]) == ("CREATED", order["id"])
        assert change["order"]["totalCents"] == 300


async def test_a_write_outside_graphql_reaches_a_subscriber(
    connect: Connect, acme: Api, store: EmbeddedStore
) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await settle()
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", USER, {"id": bob["id"]})
        await settle()
        session = Session(store, CursorCodec(b"k" * 32))
        model = await get_user(session, "acme", local_id(bob["id"], "User"), consistent=True)
        assert isinstance(model, UserModel)
        renamed = model.model_copy(update={"name": "Robert", "version": model.version + 1})
        await store.put(Put(item=renamed.to_item("acme")))  # a script's direct write
        change = (await event(ws))["data"]["userChanged"]
        assert change["change"] == "UPDATED"
        assert change["user"]["name"] == "Robert"


async def test_a_resume_replays_from_the_change_log(connect: Connect, acme: Api) -> None:
    bob = await acme.create_user("bob@acme.test", "Bob")
    await settle()
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"]})
        await settle()
        await acme.create_order(bob["id"], [("A", 1, 100)])
        cursor = (await event(ws))["data"]["orderChanged"]["cursor"]
    for sku in ("B", "C"):
        await acme.create_order(bob["id"], [(sku, 1, 100)])
    async with connect(acme.token) as ws:
        await subscribe(ws, "1", ORDERS, {"u": bob["id"], "after": cursor})
        assert await skus(ws, 2) == ["B", "C"]

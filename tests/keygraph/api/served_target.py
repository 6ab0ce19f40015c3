"""This repository's API as `keygraph serve --package generated --extend server.extension`
serves it, as a fuzz target (tests/server/fuzz/target.py's Target): the app running (its hub
and sweeps too) over one store seeded for two tenants, each user of the first two with an
address, and an admin's token of each tenant."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
from graphql import print_schema

from generated.queries.user import list_users
from generated.table import TABLE
from keygraph.cursor import CursorCodec
from keygraph.serve import Served, create_app
from keygraph.serve.package import extension_at, served
from keygraph.store import Session
from keygraph.tokens import issue
from server.domain.addresses import add_address
from server.seed.tenant import seed
from tests.conftest import StoreFactory
from tests.server.conftest import SECRET
from tests.server.fuzz.target import SIZES, Target

TENANTS = ("acme", "globex")
IDS = """{
  users(first: 10) { edges { node { id userId email addresses { id }
    orders(first: 5) { edges { node { id orderId } } }
    groups(first: 5) { edges { node { id groupId } } } } } }
  orgRoots(first: 10) { id nodeId descendants(first: 20) { edges { node { id nodeId } } } }
  shopsNear(lat: 52.52, lng: 13.405, radiusKm: 50, first: 10) { shop { id shopId } }
}"""
"""The global and local ids (and emails) of a tenant's objects, as the served API reads
them."""


def token(tenant: str, subject: str | None = None, role: str = "admin") -> dict[str, str]:
    """The Authorization header of a caller of `tenant` with one role."""
    return {"Authorization": f"Bearer {issue(SECRET, tenant, subject, roles=[role])}"}


def sdl(app: Served) -> str:
    """The served schema, printed."""
    return print_schema(app.schema)


@asynccontextmanager
async def open_served(
    kind: str, store_factory: StoreFactory
) -> AsyncIterator[tuple[Target, Served]]:
    """The served app over a fresh store of `kind`, both tenants seeded, while it runs."""
    store = await store_factory(kind, TABLE)
    session = Session(store, CursorCodec(b"c" * 32))
    for tenant in TENANTS:
        await seed(store, tenant, SIZES, progress=False)
        for user in (await list_users(session, tenant, first=2)).items:
            fields: dict[str, str | None] = {"label": "Home", "line1": "1 Main St", "line2": None}
            fields |= {"city": "Berlin", "postal_code": "10115", "country": "DE"}
            await add_address(session, tenant, user.user_id, fields, make_default=False)
    app = served("generated", store, SECRET, [extension_at("server.extension", "generated")])
    built = create_app(app)
    async with built.router.lifespan_context(built):
        transport = httpx.ASGITransport(app=built)
        async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
            acme, globex = (issue(SECRET, tenant, roles=["admin"]) for tenant in TENANTS)
            yield Target(client, store, acme, globex), app

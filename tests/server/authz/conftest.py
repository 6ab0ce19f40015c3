"""Fixtures for authorization tests: `keygraph serve`'s app (the spec's API with
server/extension/) on each store kind, an admin to set things up, and tokens for the callers
every rule is tried with."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

import graphql
import httpx
import pytest

from generated import authz
from generated.api import API
from generated.table import TABLE
from keygraph.api import executable
from keygraph.serve.package import extension_at
from keygraph.store import Store
from server.auth.tokens import issue_token
from server.domain import cleanup
from server.settings import Settings
from tests.ids import from_global_id
from tests.server.conftest import Api, app_of

CALLERS = ("admin", "owner", "other", "no_roles_claim", "unknown_role")
"""An admin; a member who owns the thing tried; a member who does not; a token without the
roles claim (the default roles, member) whose sub owns it; a token whose only role no rule
names, whose sub owns it."""


def local_id(global_id: str) -> str:
    """The one key part a global id names, whatever its type."""
    return from_global_id(global_id)[1]


@dataclass
class Tenant:
    """One tenant of a fresh app: `admin` sets things up; `as_(caller, owner_id)` is an Api
    for one of CALLERS, where `owner_id` is the local id of the user who owns what is tried
    and `other_id` another user's."""

    admin: Api
    client: httpx.AsyncClient
    settings: Settings
    store: Store

    def as_(self, caller: str, owner_id: str, other_id: str) -> Api:
        if caller == "admin":
            return self.admin
        if caller == "owner":
            token = issue_token(self.settings, "acme", owner_id, roles=["member"])
        elif caller == "other":
            token = issue_token(self.settings, "acme", other_id, roles=["member"])
        elif caller == "no_roles_claim":
            token = issue_token(self.settings, "acme", owner_id)
        else:
            token = issue_token(self.settings, "acme", owner_id, roles=["auditor"])
        return Api(self.client, token)


@pytest.fixture
async def tenant(
    kind: str, store_factory: Callable[..., Awaitable[Store]], settings: Settings
) -> AsyncIterator[Tenant]:
    store = await store_factory(kind, TABLE)
    transport = httpx.ASGITransport(app=app_of(settings, store))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        admin = Api(client, issue_token(settings, "acme", "root", roles=["admin"]))
        yield Tenant(admin, client, settings, store)
    await cleanup.stop()


def served_schema() -> graphql.GraphQLSchema:
    """The schema `keygraph serve --package generated --extend server.extension` serves."""
    return executable(API, [extension_at("server.extension", "generated")], authz)

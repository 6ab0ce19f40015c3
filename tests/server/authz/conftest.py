"""Fixtures for authorization tests: the app on each store kind with each executor, an admin
to set things up, and tokens for the callers every rule is tried with."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, replace

import httpx
import pytest

from generated.table import TABLE
from keygraph.store import Store
from server.auth.tokens import issue_token
from server.domain import cleanup
from server.edge.app import create_app
from server.settings import ExecutorKind, Settings
from tests.server.conftest import Api

CALLERS = ("admin", "owner", "other", "no_roles_claim", "unknown_role")
"""An admin; a member who owns the thing tried; a member who does not; a token without the
roles claim (the default roles, member) whose sub owns it; a token whose only role no rule
names, whose sub owns it."""


def local_id(global_id: str) -> str:
    padded = global_id + "=" * (-len(global_id) % 4)
    return base64.urlsafe_b64decode(padded).decode().split(":", 1)[1]


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


@pytest.fixture(params=["compiled", "strawberry"])
def executor(request: pytest.FixtureRequest) -> ExecutorKind:
    """Each executor in turn: the rules hold in both."""
    name: ExecutorKind = request.param
    return name


@pytest.fixture
async def tenant(
    kind: str,
    executor: ExecutorKind,
    store_factory: Callable[..., Awaitable[Store]],
    settings: Settings,
) -> AsyncIterator[Tenant]:
    settings = replace(settings, executor=executor)
    store = await store_factory(kind, TABLE)
    transport = httpx.ASGITransport(app=create_app(settings, store))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        admin = Api(client, issue_token(settings, "acme", "root", roles=["admin"]))
        yield Tenant(admin, client, settings, store)
    await cleanup.stop()

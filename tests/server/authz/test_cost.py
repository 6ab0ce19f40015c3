"""What a caller is charged counts only what it may read: a field refused before any read
costs nothing. The estimate that admits an operation is the document's, whoever asks it
(docs/contract.md); the points it did not use are given back, so the tenant's budget pays
for the objects the caller was answered."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from server.settings import Settings
from tests.server.authz.conftest import Tenant, local_id
from tests.server.conftest import Api

ORDERS = "orders(first: 50) { edges { node { id } } }"
CASES = [
    # (query, its estimate, {caller: objects answered}); $ann is the owner's user, who has
    # one order and one address, as bob, the other's, has
    (
        f"query($ann: ID!) {{ user(id: $ann) {{ id {ORDERS} }} }}",
        51,
        {"admin": 2, "owner": 2, "other": 1, "no_roles_claim": 2, "unknown_role": 0},
    ),
    (
        f"{{ users(first: 10) {{ edges {{ node {{ id {ORDERS} }} }} }} }}",
        10 + 10 * 50,
        {"admin": 4, "owner": 3, "other": 3, "no_roles_claim": 3, "unknown_role": 0},
    ),
    (
        "{ ordersByStatus(status: PENDING, first: 20) { edges { node { id } } } }",
        20,
        {"admin": 2, "owner": 0, "other": 0, "no_roles_claim": 0, "unknown_role": 0},
    ),
    (
        "query($ann: ID!) { user(id: $ann) { addresses { id } } }",
        21,
        {"admin": 2, "owner": 2, "other": 1, "no_roles_claim": 2, "unknown_role": 0},
    ),
]
ADDRESS = {"label": "home", "line1": "1 Road", "city": "Town", "postalCode": "1", "country": "DE"}


@pytest.fixture
def settings(settings: Settings) -> Settings:
    """A budget that does not refill while a test runs: what each request was charged
    shows in the next answer's remaining points."""
    return replace(settings, limits=replace(settings.limits, tenant_refill=0.001))


async def _users(tenant: Tenant) -> tuple[dict[str, Any], dict[str, Any]]:
    """ann and bob, each with an order and an address."""
    admin = tenant.admin
    users = (
        await admin.create_user("ann@example.org", "Ann"),
        await admin.create_user("bob@example.org", "Bob"),
    )
    for user in users:
        await admin.create_order(user["id"], [("A", 1, 100)])
        await admin.data(
            "mutation($i: AddAddressInput!) { addAddress(input: $i) { address { id } } }",
            {"i": {"userId": user["id"], **ADDRESS}},
        )
    return users


async def _charged(api: Api, query: str, variables: dict[str, Any]) -> tuple[int, int, int]:
    """The request's estimate, the objects it answered, and the points its tenant paid
    (its remaining points before, read from a request of no cost, less after)."""
    before = (await api("{ viewer { tenant } }"))["extensions"]["cost"]["budget"]["remaining"]
    cost = (await api(query, variables))["extensions"]["cost"]
    return cost["requested"], cost["actual"]["objects"], before - cost["budget"]["remaining"]


@pytest.mark.parametrize("kind", ["embedded"])
@pytest.mark.parametrize(("query", "estimate", "objects"), CASES)
async def test_a_caller_pays_for_what_it_may_read(
    tenant: Tenant, query: str, estimate: int, objects: dict[str, int]
) -> None:
    ann, bob = await _users(tenant)
    variables = {"ann": ann["id"]} if "$ann" in query else {}
    found = {}
    for caller in objects:
        api = tenant.as_(caller, local_id(ann["id"]), local_id(bob["id"]))
        found[caller] = await _charged(api, query, variables)
    assert found == {caller: (estimate, count, count) for caller, count in objects.items()}


@pytest.mark.parametrize("kind", ["embedded"])
async def test_a_remembered_estimate_charges_each_id_its_own(tenant: Tenant) -> None:
    """One document asked with another id is estimated once, and each answer is charged
    what that id let the caller read."""
    ann, bob = await _users(tenant)
    member = tenant.as_("owner", local_id(ann["id"]), local_id(bob["id"]))
    query = f"query($id: ID!) {{ user(id: $id) {{ id {ORDERS} }} }}"
    charged = [await _charged(member, query, {"id": user["id"]}) for user in (ann, bob, ann, bob)]
    assert charged == [(51, 2, 2), (51, 1, 1), (51, 2, 2), (51, 1, 1)]

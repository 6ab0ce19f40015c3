"""The cost estimate counts only what the caller may read: a field refused before any read
costs nothing, and what only a user's owner may read counts once per list of users."""

from __future__ import annotations

import pytest

from tests.server.authz.conftest import Tenant, local_id

ORDERS = "orders(first: 50) { edges { node { id } } }"
CASES = [
    # (query, {caller: requested cost}); $ann is the owner's user, $bob the other's
    (
        f"query($ann: ID!) {{ user(id: $ann) {{ id {ORDERS} }} }}",
        {"admin": 51, "owner": 51, "other": 1, "unknown_role": 0},
    ),
    (
        f"{{ users(first: 10) {{ edges {{ node {{ id {ORDERS} }} }} }} }}",
        {"admin": 10 + 10 * 50, "owner": 10 + 50, "other": 10 + 50, "unknown_role": 0},
    ),
    (
        "{ ordersByStatus(status: PENDING, first: 20) { edges { node { id } } } }",
        {"admin": 20, "owner": 0, "other": 0, "unknown_role": 0},
    ),
    (
        "query($ann: ID!) { user(id: $ann) { addresses { id } } }",
        {"admin": 21, "owner": 21, "other": 1, "unknown_role": 0},
    ),
]


@pytest.mark.parametrize("kind", ["embedded"])
@pytest.mark.parametrize(("query", "costs"), CASES)
async def test_the_estimate_counts_what_the_caller_may_read(
    tenant: Tenant, query: str, costs: dict[str, int]
) -> None:
    ann = await tenant.admin.create_user("ann@example.org", "Ann")
    bob = await tenant.admin.create_user("bob@example.org", "Bob")
    variables = {"ann": ann["id"]} if "$ann" in query else {}
    found = {}
    for caller in costs:
        api = tenant.as_(caller, local_id(ann["id"]), local_id(bob["id"]))
        body = await api(query, variables)
        found[caller] = body["extensions"]["cost"]["requested"]
    assert found == costs


@pytest.mark.parametrize("kind", ["embedded"])
async def test_a_remembered_estimate_is_one_callers_for_one_id(tenant: Tenant) -> None:
    ann = await tenant.admin.create_user("ann@example.org", "Ann")
    bob = await tenant.admin.create_user("bob@example.org", "Bob")
    member = tenant.as_("owner", local_id(ann["id"]), local_id(bob["id"]))
    query = f"query($id: ID!) {{ user(id: $id) {{ id {ORDERS} }} }}"
    costs = []
    for user in (ann, bob, ann, bob):
        body = await member(query, {"id": user["id"]})
        costs.append(body["extensions"]["cost"]["requested"])
    assert costs == [51, 1, 51, 1]

"""node(id) and viewer: every type answers by global id, unknown ones read as null."""

from __future__ import annotations

import base64

from tests.server.conftest import Api

NODE = """query($id: ID!) { node(id: $id) { __typename id
  ... on User { email } ... on Order { totalCents } ... on Group { name } } }"""


def _gid(raw: str) -> str:
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


async def test_node_answers_for_users_orders_and_groups(acme: Api) -> None:
    user = await acme.create_user("n@example.org")
    order = await acme.create_order(user["id"], [("X", 2, 21)])
    group = await acme.create_group("Nodes")
    assert (await acme.data(NODE, {"id": user["id"]}))["node"] == {
        "__typename": "User",
        "id": user["id"],
        "email": "n@example.org",
    }
    assert (await acme.data(NODE, {"id": order["id"]}))["node"] == {
        "__typename": "Order",
        "id": order["id"],
        "totalCents": 42,
    }
    assert (await acme.data(NODE, {"id": group["id"]}))["node"] == {
        "__typename": "Group",
        "id": group["id"],
        "name": "Nodes",
    }


async def test_unknown_types_and_missing_nodes_are_null(acme: Api) -> None:
    for global_id in (_gid("Nope:1"), _gid("User:01ARZ3NDEKTSV4RRFFQ69G5FAV"), _gid("Order:x")):
        assert (await acme.data(NODE, {"id": global_id}))["node"] is None


async def test_malformed_global_ids_are_bad_user_input(acme: Api) -> None:
    for global_id in ("", "!!!", _gid("no-colon"), _gid(":empty-type"), _gid("User:")):
        assert await acme.codes(NODE, {"id": global_id}) == ["BAD_USER_INPUT"], global_id


async def test_viewer_shows_the_tokens_tenant_and_subject(acme: Api, globex: Api) -> None:
    assert (await acme.data("{ viewer { tenant subject } }"))["viewer"] == {
        "tenant": "acme",
        "subject": "alice",
    }
    assert (await globex.data("{ viewer { tenant } }"))["viewer"] == {"tenant": "globex"}

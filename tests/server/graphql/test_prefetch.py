"""A page of users loads the orders and groups its users are asked for ahead, for all of
them at once: the store calls and waves are the ones the fields would have made, the answers
the same, and only what the selection asks for (through fragments, variables, @skip and
@include) is loaded."""

from __future__ import annotations

from typing import Any

from keygraph.stores.embedded.store import EmbeddedStore
from tests.ids import to_global_id
from tests.server.conftest import Api, store_counts
from tests.server.graphql.test_batching import _seed

ORDERS = "orders(first: 2) { edges { node { totalCents } } }"


async def test_users_answer_as_each_user_asked_alone(acme: Api, store: EmbeddedStore) -> None:
    user_ids = await _seed(store, users=5, orders_each=3, groups=2)
    fields = f"email {ORDERS} groups {{ edges {{ node {{ name }} }} }}"
    body = await acme(f"{{ users(first: 5) {{ edges {{ node {{ {fields} }} }} }} }}")
    # the page; 5 order queries and one batch get of the 2 groups (their ids are on the
    # users) in one wave
    assert store_counts(body) == {"storeCalls": 1 + 5 + 1, "storeWaves": 2}
    listed = [edge["node"] for edge in body["data"]["users"]["edges"]]
    for user_id, user in zip(user_ids, listed, strict=True):
        alone = await acme.data(
            f'{{ node(id: "{to_global_id("User", user_id)}") {{ ... on User {{ {fields} }} }} }}'
        )
        assert alone["node"] == user
        assert len(user["orders"]["edges"]) == 2
        assert len(user["groups"]["edges"]) == 2


async def test_fragments_and_variables_reach_the_same_loads(
    acme: Api, store: EmbeddedStore
) -> None:
    await _seed(store, users=4, orders_each=3)
    query = """query($n: Int!, $size: Int) { users(first: $size) { ...Page } }
      fragment Page on UserConnection { edges { ... on UserEdge { node { ...Orders } } } }
      fragment Orders on User { orders(first: $n) { edges { node { totalCents } } } }"""
    body = await acme(query, {"n": 2, "size": 4})
    assert all(len(e["node"]["orders"]["edges"]) == 2 for e in body["data"]["users"]["edges"])
    # one order query per user: a load ahead under other arguments would double them
    assert store_counts(body) == {"storeCalls": 1 + 4, "storeWaves": 2}


async def test_skipped_fields_are_not_loaded(acme: Api, store: EmbeddedStore) -> None:
    await _seed(store, users=3, orders_each=1, groups=1)
    query = f"""query($skip: Boolean!, $with: Boolean!) {{ users {{ edges {{ node {{ email
      {ORDERS.replace("orders(first: 2)", "orders(first: 2) @skip(if: $skip)")}
      groups @include(if: $with) {{ edges {{ node {{ name }} }} }} }} }} }} }}"""
    assert store_counts(await acme(query, {"skip": True, "with": False})) == {
        "storeCalls": 1,
        "storeWaves": 1,
    }
    assert store_counts(await acme(query, {"skip": False, "with": False})) == {
        "storeCalls": 1 + 3,
        "storeWaves": 2,
    }
    assert store_counts(await acme(query, {"skip": True, "with": True})) == {
        "storeCalls": 1 + 1,
        "storeWaves": 2,
    }


async def test_a_failed_load_fails_at_each_users_field(acme: Api, store: EmbeddedStore) -> None:
    await _seed(store, users=3, orders_each=1)
    body: dict[str, Any] = await acme(
        '{ users { edges { node { email orders(after: "not-a-cursor") { edges { cursor } } } } } }'
    )
    # as when each user loads its own: each user's field fails, and being nullable (a caller
    # may be refused it), is null while the rest of the page stands
    edges = body["data"]["users"]["edges"]
    assert [edge["node"]["orders"] for edge in edges] == [None] * 3
    assert [(e["extensions"]["code"], e["path"]) for e in body["errors"]] == [
        ("INVALID_CURSOR", ["users", "edges", n, "node", "orders"]) for n in range(3)
    ]

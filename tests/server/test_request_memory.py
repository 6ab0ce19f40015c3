"""What a request loads is freed when the request ends, by reference counting, rather than
left in reference cycles for the garbage collector to find."""

from __future__ import annotations

import gc
from collections import Counter

import pytest

from generated.models.user_order import UserOrder
from keygraph.page import Page
from keygraph.stores.embedded.store import EmbeddedStore
from server.edge import response
from tests.server.conftest import Api
from tests.server.test_batching import _seed

QUERY = """{ users { edges { node { email
  orders(first: 2) { edges { node { totalCents } } }
  groups { edges { node { name members { edges { node { email } } } } } } } } } }"""


async def test_loaded_data_is_not_left_in_cycles(acme: Api, store: EmbeddedStore) -> None:
    await _seed(store, users=4, orders_each=2, groups=2)
    await acme.data(QUERY)
    gc.collect()
    gc.disable()
    try:
        await acme.data(QUERY)
        gc.set_debug(gc.DEBUG_SAVEALL)
        gc.collect()
        left = Counter(type(thing).__name__ for thing in gc.garbage)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
        gc.enable()
    loaded = ("DataLoader", "Future", "Page", "User", "UserOrder", "Membership", "Group")
    assert {name: left[name] for name in loaded if left[name]} == {}


async def test_what_a_request_read_is_freed_before_its_response_is_serialized(
    acme: Api, store: EmbeddedStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Once the result is complete, the models and pages behind it are no longer held (by the
    loaders, a page's cursors or the handle that resumed the request): a large response then
    needs memory for itself and its JSON, not also for everything read to build it."""
    await _seed(store, users=4, orders_each=3, groups=2)
    live: list[int] = []
    encode = response.encode

    def counting(data: object) -> bytes:
        live.append(sum(type(thing) in (UserOrder, Page) for thing in gc.get_objects()))
        return encode(data)

    monkeypatch.setattr(response, "encode", counting)
    data = await acme.data(
        "{ users { edges { node { orders(first: 2) { edges { cursor node { id } } } } } } }"
    )
    orders = [edge for user in data["users"]["edges"] for edge in user["node"]["orders"]["edges"]]
    assert len(orders) == 8  # the response holds what was read
    assert live == [0]

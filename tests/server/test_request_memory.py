"""What a request loads is freed when the request ends, by reference counting, rather than
left in reference cycles for the garbage collector to find."""

from __future__ import annotations

import gc
from collections import Counter

from keygraph.stores.embedded.store import EmbeddedStore
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

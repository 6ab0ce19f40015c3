"""A shop's move rewrites its geohash keys in one write; a user's new email swaps claims."""

from __future__ import annotations

from tests.server.conftest import World

MOVE = """mutation($i: MoveShopInput!) { moveShop(input: $i) { id lat lng version } }"""
NEAR = """query($lat: Float!, $lng: Float!) {
  shopsNear(lat: $lat, lng: $lng, radiusKm: 5) { shop { id } } }"""


async def near(world: World, lat: float, lng: float) -> list[str]:
    data = await world.acme.data(NEAR, {"lat": lat, "lng": lng})
    return [entry["shop"]["id"] for entry in data["shopsNear"]]


async def test_move_shop(world: World) -> None:
    acme = world.acme
    created = await acme.data(
        'mutation { createShop(input: {name: "Kiosk", lat: 52.52, lng: 13.405}) { id } }'
    )
    shop = created["createShop"]["id"]
    assert await near(world, 52.52, 13.405) == [shop]
    move = {"id": shop, "expectedVersion": 1, "lat": 48.8566, "lng": 2.3522}
    assert await acme.codes(MOVE, {"i": {**move, "lat": 91}}) == ["BAD_USER_INPUT"]
    assert await acme.codes(MOVE, {"i": {**move, "expectedVersion": 2}}) == ["CONFLICT"]
    assert await near(world, 52.52, 13.405) == [shop]  # the refused moves changed nothing
    moved = (await acme.data(MOVE, {"i": move}))["moveShop"]
    assert (moved["lat"], moved["lng"], moved["version"]) == (48.8566, 2.3522, 2)
    assert await near(world, 52.52, 13.405) == []
    assert await near(world, 48.8566, 2.3522) == [shop]
    assert await world.globex.codes(MOVE, {"i": {**move, "expectedVersion": 2}}) == ["NOT_FOUND"]


async def test_a_new_email_swaps_the_claims(world: World) -> None:
    acme = world.acme
    user = await acme.create_user("old@example.org")
    await acme.create_user("taken@example.org")
    update = """mutation($i: UpdateUserInput!) { updateUser(input: $i) { email version } }"""
    taken = {"id": user["id"], "expectedVersion": 1, "email": "taken@example.org"}
    assert await acme.codes(update, {"i": taken}) == ["CONFLICT"]
    changed = await acme.data(update, {"i": {**taken, "email": "new@example.org"}})
    assert changed["updateUser"] == {"email": "new@example.org", "version": 2}
    by_email = """{ old: userByEmail(email: "old@example.org") { id }
      new: userByEmail(email: "new@example.org") { id } }"""
    assert await acme.data(by_email) == {"old": None, "new": {"id": user["id"]}}
    assert (await acme.create_user("old@example.org"))["email"] == "old@example.org"

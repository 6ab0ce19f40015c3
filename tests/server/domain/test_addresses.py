"""Addresses: added, changed, removed, one default; read with their user in one Query."""

from __future__ import annotations

from typing import Any

from tests.ids import local_id
from tests.server.conftest import World, store_counts

ADDRESS = "id label line1 line2 city postalCode country version isDefault"
ADD = f"""mutation($i: AddAddressInput!) {{ addAddress(input: $i) {{
  address {{ {ADDRESS} }} user {{ id version defaultAddress {{ id }} }} }} }}"""
UPDATE = f"""mutation($i: UpdateAddressInput!) {{ updateAddress(input: $i) {{
  address {{ {ADDRESS} }} user {{ version }} }} }}"""
REMOVE = """mutation($i: RemoveAddressInput!) { removeAddress(input: $i) {
  deletedId user { version defaultAddress { id } addresses { id } } } }"""


def home(user_id: str, **changes: Any) -> dict[str, Any]:
    fields = {
        "userId": user_id,
        "label": "Home",
        "line1": "Karl-Marx-Allee 1",
        "city": "Berlin",
        "postalCode": "10178",
        "country": "DE",
    }
    return {**fields, **changes}


async def test_add_update_remove_with_one_default(world: World) -> None:
    acme = world.acme
    user = await acme.create_user("ada@example.org")
    first = (await acme.data(ADD, {"i": home(user["id"])}))["addAddress"]
    assert first["address"]["isDefault"] is True  # a first address is the default
    assert first["user"]["defaultAddress"]["id"] == first["address"]["id"]
    assert first["user"]["version"] == user["version"] + 1

    work = home(user["id"], label="Work", line2="3rd floor", makeDefault=True)
    second = (await acme.data(ADD, {"i": work}))["addAddress"]
    assert second["address"]["isDefault"] is True
    assert second["address"]["line2"] == "3rd floor"

    query = f'{{ user(id: "{user["id"]}") {{ version addresses {{ {ADDRESS} }} '
    query += "defaultAddress { label } } }"
    body = await acme(query)
    assert "errors" not in body, body
    read = body["data"]["user"]
    assert [a["label"] for a in read["addresses"]] == ["Home", "Work"]
    assert [a["isDefault"] for a in read["addresses"]] == [False, True]
    assert read["defaultAddress"] == {"label": "Work"}
    assert store_counts(body) == {"storeCalls": 1, "storeWaves": 1}  # one Query for all

    change = {"id": first["address"]["id"], "expectedVersion": 1, "city": "Potsdam"}
    changed = (await acme.data(UPDATE, {"i": {**change, "makeDefault": True}}))["updateAddress"]
    assert changed["address"]["city"] == "Potsdam"
    assert changed["address"]["version"] == 2
    assert changed["address"]["isDefault"] is True
    assert await acme.codes(UPDATE, {"i": change}) == ["CONFLICT"]  # version 1 is stale

    removed = await acme.data(REMOVE, {"i": {"id": first["address"]["id"], "expectedVersion": 2}})
    after = removed["removeAddress"]["user"]
    assert after["defaultAddress"] is None  # the default went with it
    assert [a["id"] for a in after["addresses"]] == [second["address"]["id"]]
    line2_gone = {"id": second["address"]["id"], "expectedVersion": 1, "line2": None}
    assert (await acme.data(UPDATE, {"i": line2_gone}))["updateAddress"]["address"]["line2"] is None


async def test_bad_input_writes_nothing(world: World) -> None:
    acme = world.acme
    user = await acme.create_user("bob@example.org")
    partition = f"T#acme#USER#{local_id(user['id'], 'User')}"
    before = await world.partition(partition)
    for bad in (
        home(user["id"], country="Germany"),
        home(user["id"], label=""),
        home(user["id"], postalCode="1" * 21),
    ):
        assert await acme.codes(ADD, {"i": bad}) == ["BAD_USER_INPUT"]
    assert await acme.codes(ADD, {"i": home("VXNlcjpub3BlOm5vcGU=")}) in (
        ["NOT_FOUND"],
        ["BAD_USER_INPUT"],
    )
    assert await world.partition(partition) == before
    added = (await acme.data(ADD, {"i": home(user["id"])}))["addAddress"]["address"]
    no_city = {"id": added["id"], "expectedVersion": 1, "city": None}
    assert await acme.codes(UPDATE, {"i": no_city}) == ["BAD_USER_INPUT"]
    assert await acme.codes(UPDATE, {"i": {"id": added["id"], "expectedVersion": 1}}) == [
        "BAD_USER_INPUT"
    ]


async def test_a_user_has_at_most_twenty(world: World) -> None:
    acme = world.acme
    user = await acme.create_user("many@example.org")
    for n in range(20):
        await acme.data(ADD, {"i": home(user["id"], label=f"A{n}")})
    assert await acme.codes(ADD, {"i": home(user["id"], label="A20")}) == ["BAD_USER_INPUT"]
    addresses = await acme.data(f'{{ user(id: "{user["id"]}") {{ addresses {{ id }} }} }}')
    assert len(addresses["user"]["addresses"]) == 20


async def test_another_tenant_cannot_touch_them(world: World) -> None:
    acme, globex = world.acme, world.globex
    user = await acme.create_user("carol@example.org")
    added = (await acme.data(ADD, {"i": home(user["id"])}))["addAddress"]["address"]
    assert await globex.codes(ADD, {"i": home(user["id"])}) == ["NOT_FOUND"]
    change = {"id": added["id"], "expectedVersion": 1, "city": "Paris"}
    assert await globex.codes(UPDATE, {"i": change}) == ["NOT_FOUND"]
    gone = {"id": added["id"], "expectedVersion": 1}
    assert await globex.codes(REMOVE, {"i": gone}) == ["NOT_FOUND"]
    assert (await globex.data(f'{{ node(id: "{added["id"]}") {{ id }} }}'))["node"] is None
    node = await acme.data(f'{{ node(id: "{added["id"]}") {{ ... on Address {{ city }} }} }}')
    assert node["node"] == {"city": "Berlin"}

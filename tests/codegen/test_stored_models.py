"""Generated `from_item` skips validation only for values validation keeps as they are: for
any stored item, it answers as validating every loaded value would (the same model, or
pydantic's ValidationError)."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pydantic
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from generated.models.membership import Membership
from generated.models.shop import Shop
from generated.models.user import User
from keygraph import keycodec
from keygraph.plan import Item

T0 = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)

USER = User(
    user_id="u1", email="a@b.org", name="Ann", created_at=T0, version=2, group_ids=["g1", "g2"]
).to_item("acme")
SHOP = Shop(
    shop_id="s1",
    name="Corner",
    lat=52.5,
    lng=13.4,
    geohash="u33dc0cpp",
    geo_cell="u33",
    created_at=T0,
).to_item("acme")
MEMBERSHIP = Membership(user_id="u1", group_id="g1", joined_at=T0).to_item("acme")


def _validated(model: type[Any], item: Item) -> Any:
    """The model as validation makes it from the values from_item loads."""
    loaded = {
        "User": lambda: {
            "user_id": item["user_id"],
            "email": item["email"],
            "name": item["name"],
            "created_at": keycodec.parse_datetime(item["created_at"]),
            "version": int(item["version"]),
            "default_address_id": item.get("default_address_id"),
            "group_ids": item.get("group_ids"),
        },
        "Shop": lambda: {
            "shop_id": item["shop_id"],
            "name": item["name"],
            "lat": float(item["lat"]),
            "lng": float(item["lng"]),
            "geohash": item["geohash"],
            "geo_cell": item["geo_cell"],
            "created_at": keycodec.parse_datetime(item["created_at"]),
            "version": int(item.get("version", 1)),
        },
        "Membership": lambda: {
            "user_id": item["user_id"],
            "group_id": item["group_id"],
            "joined_at": keycodec.parse_datetime(item["joined_at"]),
        },
    }[model.__name__]()
    return model(**loaded)


CASES: list[tuple[type[Any], Item]] = [
    (User, USER),
    (User, {**USER, "email": "nope"}),
    (User, {**USER, "email": "a b@c.org"}),
    (User, {**USER, "email": "a@b.org\n"}),
    (User, {**USER, "email": "a\x1c@b.org"}),
    (User, {**USER, "email": 7}),
    (User, {**USER, "name": ""}),
    (User, {**USER, "name": "n" * 201}),
    (User, {**USER, "user_id": "u\x00"}),
    (User, {**USER, "user_id": "u\x85"}),  # not printable, yet an Id
    (User, {**USER, "user_id": "u" * 129}),
    (User, {**USER, "user_id": b"u1"}),
    (User, {**USER, "version": 0}),
    (User, {**USER, "version": True}),
    (User, {**USER, "version": Decimal("3")}),
    (User, {**USER, "created_at": "2024-05-01T14:00:00+02:00"}),
    (User, {**USER, "created_at": "2024-05-01T12:00:00"}),
    (User, {**USER, "default_address_id": ""}),
    (User, {**USER, "default_address_id": "a1"}),
    (User, {**USER, "group_ids": ["g"] * 101}),
    (User, {**USER, "group_ids": ["g1", 2]}),
    (User, {**USER, "group_ids": ("g1",)}),
    (User, {**USER, "group_ids": []}),
    (User, {**USER, "group_ids": ["g1", ""]}),
    (User, {**USER, "group_ids": ["g1", "g\x07"]}),
    (User, {**USER, "group_ids": ["g1", "g\x7f"]}),
    (User, {**USER, "group_ids": ["g1", "g-1 x"]}),  # printable ASCII, not letters or digits
    (User, {**USER, "group_ids": ["g1", "gé"]}),
    (User, {**USER, "group_ids": ["g1", "g\x85"]}),
    (User, {**USER, "group_ids": ["g1", "g" * 129]}),
    (User, {**USER, "group_ids": ["g1", None]}),
    (Shop, SHOP),
    (Shop, {**SHOP, "lat": Decimal("90.5")}),
    (Shop, {**SHOP, "lng": Decimal("-180")}),
    (Shop, {**SHOP, "lat": Decimal("NaN")}),
    (Shop, {**SHOP, "geohash": "u33"}),
    (Shop, {key: value for key, value in SHOP.items() if key != "version"}),
    (Membership, MEMBERSHIP),
    (Membership, {**MEMBERSHIP, "group_id": None}),
]


@pytest.mark.parametrize(("model", "item"), CASES)
def test_from_item_answers_as_validation_does(model: type[Any], item: Item) -> None:
    refused: list[Any] | None = None
    try:
        expected = _validated(model, item)
    except pydantic.ValidationError as exc:
        refused = exc.errors(include_input=False)
    if refused is not None:
        with pytest.raises(pydantic.ValidationError) as raised:
            model.from_item(item)
        assert raised.value.errors(include_input=False) == refused
        return
    found = model.from_item(item)
    assert found == expected
    assert list(found.__dict__) == list(expected.__dict__)
    assert found.model_fields_set == expected.model_fields_set
    assert found.model_dump() == expected.model_dump()


_ASCII = st.text(st.characters(max_codepoint=127), max_size=130)
_ALNUM = st.text("abcXYZ019", min_size=1, max_size=130)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.one_of(_ALNUM, _ASCII, st.text(max_size=130), st.integers()), max_size=102))
def test_any_list_of_group_ids_reads_as_validation_does(group_ids: list[Any]) -> None:
    test_from_item_answers_as_validation_does(User, {**USER, "group_ids": group_ids})


def test_a_model_read_unvalidated_copies_and_compares_as_any() -> None:
    read, other = User.from_item(USER), User.from_item(USER)
    changed = read.model_copy(update={"version": 3})
    assert changed.version == 3
    assert changed.model_fields_set is not other.model_fields_set  # read models share theirs
    assert other.model_fields_set == set(User.model_fields)
    assert read.to_item("acme") == USER
    with pytest.raises(pydantic.ValidationError):
        read.name = "other"  # type: ignore[misc]

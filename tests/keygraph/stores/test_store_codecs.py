"""Value codecs: the hand-written wire format is the DynamoDB JSON botocore would send for
boto3's TypeSerializer form, numbers are canonical and sized the DynamoDB way, and prefix
bounds are exact."""

from __future__ import annotations

import functools
import json
from decimal import Decimal
from typing import Any

import botocore.session
import pytest
from boto3.dynamodb.types import TypeDeserializer, TypeSerializer
from botocore.model import OperationModel
from botocore.serialize import create_serializer
from hypothesis import given, settings
from hypothesis import strategies as st

from keygraph.errors import ValidationError
from keygraph.stores.dynamodb import wire
from keygraph.stores.embedded import values
from keygraph.stores.embedded.keyrange import prefix_successor

TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=8)
NUMBERS = st.integers(-(10**20), 10**20) | st.decimals(
    allow_nan=False, allow_infinity=False, places=4, min_value=-(10**9), max_value=10**9
)
LEAVES = TEXT | NUMBERS | st.booleans() | st.none() | st.binary(max_size=8)
SETS = (
    st.sets(TEXT, min_size=1, max_size=3)
    | st.sets(st.integers(-50, 50), min_size=1, max_size=3)
    | st.sets(st.binary(max_size=4), min_size=1, max_size=3)
)
VALUES = st.recursive(
    LEAVES | SETS,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(TEXT, children, max_size=3),
    max_leaves=10,
)


def canonical(value: Any) -> Any:
    """Lists inside boto3's sets come in any order: compare them as sets."""
    if isinstance(value, dict):
        if len(value) == 1 and next(iter(value)) in ("SS", "NS", "BS"):
            tag, members = next(iter(value.items()))
            return {tag: sorted(members)}
        return {k: canonical(v) for k, v in value.items()}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value


@functools.cache
def put_item_model() -> OperationModel:
    return botocore.session.get_session().get_service_model("dynamodb").operation_model("PutItem")


def botocore_json(attribute: Any) -> Any:
    """The attribute value as botocore's JSON serialiser puts it on the wire."""
    params = {"TableName": "t", "Item": {"v": attribute}}
    request = create_serializer("json").serialize_to_request(params, put_item_model())
    return json.loads(request["body"])["Item"]["v"]


@settings(max_examples=150, deadline=None)
@given(VALUES)
def test_wire_matches_boto3(value: Any) -> None:
    ours = wire.serialize(value)
    boto3_form = TypeSerializer().serialize(value)
    assert canonical(ours) == canonical(botocore_json(boto3_form))
    sent = json.loads(json.dumps(ours))
    assert wire.deserialize(sent) == value
    assert wire.deserialize(sent) == TypeDeserializer().deserialize(boto3_form)


def test_binary_travels_as_base64_text() -> None:
    assert wire.serialize(b"\x00\xff") == {"B": "AP8="}
    assert wire.deserialize({"BS": ["AP8=", ""]}) == {b"\x00\xff", b""}
    with pytest.raises(ValidationError):
        wire.deserialize({"B": "not base64!"})


@settings(max_examples=150, deadline=None)
@given(VALUES)
def test_embedded_encoding_round_trips(value: Any) -> None:
    encoded, _ = values.encode(value)
    assert values.decode(encoded) == value


PLAIN_VALUES = st.recursive(
    TEXT | st.integers(-(2**63), 2**63 - 1) | st.booleans() | st.none(),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(TEXT, children, max_size=3),
    max_leaves=10,
)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(TEXT, VALUES, max_size=4))
def test_stored_bodies_read_back_as_dynamodb_json_decodes(item: dict[str, Any]) -> None:
    wire, _ = values.encode_item(item)
    stored = values.stored_body(wire)
    # repr tells Decimal("1.5") from Decimal("1.50"), which == does not
    assert repr(values.item_of(*stored)) == repr(values.decode_item(wire))
    assert values.encode_item(values.item_of(*stored))[0] == wire
    assert values.stored_body(wire, item) == stored


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(TEXT, VALUES, max_size=4))
def test_plain_items_are_sized_as_encoded_without_encoding(item: dict[str, Any]) -> None:
    size = values.plain_size(item)
    if size is not None:
        assert size == values.encode_item(item)[1]
        assert values.stored_body(*values.encode_item(item)[:1], item)[1] == values.PLAIN


@pytest.mark.parametrize(
    ("item", "plain"),
    [
        ({"s": "é", "n": [0, -100, 2**63 - 1], "m": {"b": True, "z": None}}, True),
        ({"n": 2**63}, False),
        ({"n": Decimal("1.5")}, False),
        ({"b": b"x"}, False),
        ({"t": ("a",)}, False),
    ],
)
def test_plain_size_is_the_encoded_size_of_plain_items_only(
    item: dict[str, Any], plain: bool
) -> None:
    size = values.plain_size(item)
    assert size == (values.encode_item(item)[1] if plain else None)


@pytest.mark.parametrize(
    "number", ["37.7749", "-122.4194", "0.1", "0.00001", "123456.75", "-0.000000000001"]
)
def test_top_level_fractions_a_float_holds_are_stored_as_plain_json(number: str) -> None:
    wire, _ = values.encode_item({"lat": Decimal(number), "n": 3, "tags": ["a"]})
    body, body_format = values.stored_body(wire)
    assert body_format == values.FRACTIONS
    assert json.loads(body) == {"lat": float(number), "n": 3, "tags": ["a"]}
    read = values.item_of(body, body_format)["lat"]
    assert read.as_tuple() == Decimal(number).as_tuple()


@pytest.mark.parametrize(
    "value",
    [Decimal("0.1000000000000000000001"), [Decimal("0.5")], {"m": Decimal("0.5")}, b"x"],
)
def test_fractions_a_float_changes_or_nested_ones_keep_dynamodb_json(value: Any) -> None:
    wire, _ = values.encode_item({"v": value, "lat": Decimal("1.5")})
    assert values.stored_body(wire)[1] == values.WIRE


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(TEXT, VALUES, max_size=4))
def test_a_body_from_the_item_at_hand_is_the_body_from_its_encoding(item: dict[str, Any]) -> None:
    wire, _ = values.encode_item(item)
    assert values.plain_body(wire, item) == values.plain_body(wire)


@settings(max_examples=150, deadline=None)
@given(st.dictionaries(TEXT, PLAIN_VALUES, max_size=4))
def test_items_of_strings_integers_booleans_and_nulls_are_stored_plain(
    item: dict[str, Any],
) -> None:
    assert values.plain_body(values.encode_item(item)[0]) is not None


@pytest.mark.parametrize(
    "value",
    [Decimal("1.5"), 2**63, -(2**63) - 1, b"x", {"a"}, [1, Decimal("0.1")], {"m": {1, 2}}],
)
def test_values_plain_json_would_change_keep_dynamodb_json(value: Any) -> None:
    assert values.plain_body(values.encode_item({"v": value})[0]) is None


@pytest.mark.parametrize(
    ("text", "canonical_text", "size"),
    [
        ("123456", "123456", 4),  # three digit pairs + 1
        ("-1234567.891", "-1234567.891", 8),  # pairs 01|23|45|67|.89|10, +1, +1 negative
        ("333.5", "333.5", 4),  # 03|33|.50 + 1
        ("0100", "100", 2),  # one significant pair (1 x 10^2) + 1
        ("1.50", "1.5", 3),  # 01|.50 + 1
        ("1E+2", "100", 2),
        ("-0", "0", 1),
    ],
)
def test_numbers_are_canonical_and_sized(text: str, canonical_text: str, size: int) -> None:
    assert values.canonical_number(text) == canonical_text
    assert values.number_size(canonical_text) == size


@settings(max_examples=300, deadline=None)
@given(
    st.one_of(
        st.integers(min_value=-(10**38) + 1, max_value=10**38 - 1),
        st.integers(min_value=-9, max_value=9).map(lambda d: d * 10**37),
        st.integers(min_value=0, max_value=37).map(lambda e: 10**e),
    )
)
def test_ints_encode_as_their_decimal_does(value: int) -> None:
    """Ints take a path without Decimal; it must give the same text and size."""
    text = values.canonical_number(value)
    assert values.encode(value) == ({"N": text}, values.number_size(text))


@pytest.mark.parametrize("bad", ["1" * 39, "1E+126", "1E-131", "NaN", "Infinity", "abc"])
def test_numbers_dynamodb_refuses(bad: str) -> None:
    with pytest.raises(ValidationError):
        values.canonical_number(bad)


def test_decoded_numbers_keep_their_kind() -> None:
    assert type(wire.deserialize({"N": "12"})) is int
    assert wire.deserialize({"N": "1.25"}) == Decimal("1.25")
    assert type(values.decode({"N": "12"})) is int


@settings(max_examples=200, deadline=None)
@given(TEXT.filter(bool), TEXT)
def test_prefix_successor_bounds_exactly_the_prefixed_strings(prefix: str, other: str) -> None:
    upper = prefix_successor(prefix)
    inside = (prefix + other).encode()
    assert inside >= prefix.encode()
    if upper is not None:
        assert inside < upper.encode()
        # Anything between prefix and upper starts with the prefix.
        if prefix.encode() <= other.encode() < upper.encode():
            assert other.startswith(prefix)

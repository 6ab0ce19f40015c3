"""Key sizes: the generated builders refuse a key DynamoDB would refuse, naming the value, and
accept the longest values the spec allows (the worst case `codegen lint` computes)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from codegen import pipeline
from codegen.diagnostics import Edit, SpecErrors
from codegen.key_sizes import character_bytes
from generated.keys import email_claim, membership, order, org_node, shop, user
from generated.queries import org_node as org_node_queries
from generated.queries import user_order as user_order_queries
from keygraph import keycodec
from keygraph.errors import BadArgument, KeyTooLong
from tests.codegen.spec_edits import apply

T0 = datetime(2024, 1, 2, tzinfo=UTC)
WIDE = "\U0001f600"
"""A character of four bytes in UTF-8, the most any character takes."""


def test_sized_holds_keys_to_dynamodbs_byte_limits() -> None:
    at_limit = "p" * keycodec.PARTITION_KEY_BYTES
    assert keycodec.sized(at_limit, keycodec.PARTITION_KEY_BYTES, "{x}") == at_limit
    wide = "é" * (keycodec.SORT_KEY_BYTES // 2)
    assert keycodec.sized(wide, keycodec.SORT_KEY_BYTES, "{x}") == wide
    refused = r"x is too long: .* 1,026 bytes .* sort key at most 1,024"
    with pytest.raises(KeyTooLong, match=refused):
        keycodec.sized(wide + "é", keycodec.SORT_KEY_BYTES, "{x}")
    with pytest.raises(BadArgument, match="valid Unicode"):
        keycodec.sized("T#\ud800", keycodec.PARTITION_KEY_BYTES, "T#{tenant}")


@pytest.mark.parametrize(
    ("build", "culprit"),
    [
        (lambda: user.key("acme", "u" * 5000), "user_id"),
        (lambda: user.key("t" * 3000, "u1"), "tenant"),
        (lambda: email_claim.key("acme", "e" * 3000), "email_key"),
        (lambda: org_node.key("acme", ["n" * 60] * 31), "path"),
        (lambda: order.key("acme", "#" * 2000), "order_id"),
        (lambda: user.gsi1_key("acme", T0, "u" * 1100), "user_id"),
        (lambda: membership.gsi1_key("acme", "g1", "u" * 1100), "user_id"),
        (lambda: org_node.gsi1_key("acme", "ROOT", "x" * 1000, "n" * 100), "name"),
        (lambda: shop.gsi2_key("acme", "u4p", "g" * 2000, "s1"), "geohash"),
    ],
)
def test_builders_refuse_keys_dynamodb_refuses(build: Callable[[], object], culprit: str) -> None:
    with pytest.raises(KeyTooLong, match=f"^{culprit} is too long"):
        build()


def test_query_plans_refuse_keys_dynamodb_refuses() -> None:
    with pytest.raises(KeyTooLong, match=r"^path is too long"):
        org_node_queries.plan_org_subtree("acme", ["n" * 60] * 31, limit=10)
    with pytest.raises(KeyTooLong, match=r"^user_id is too long"):
        user_order_queries.plan_user_orders("acme", "u" * 3000, limit=10)


def test_builders_take_the_longest_values_the_spec_allows() -> None:
    tenant, any_id = WIDE * 128, WIDE * 128
    user.key(tenant, any_id)
    user.gsi1_key(tenant, T0, any_id)
    email_claim.key(tenant, WIDE * 381)
    membership.gsi1_key(tenant, any_id, any_id)
    deepest = ["N" * 26] * 32
    assert len(org_node.key(tenant, deepest)["SK"]) == len("NODE#") + 32 * 27 - 1
    org_node.gsi1_key(tenant, any_id, WIDE * 200, "N" * 26)
    org_node_queries.plan_org_subtree(tenant, deepest, limit=10)


@settings(max_examples=200, deadline=None)
@given(st.text(min_size=1, max_size=1200), st.lists(st.text(min_size=1, max_size=60), min_size=1))
def test_a_builder_returns_a_key_dynamodb_takes_or_refuses(value: str, path: list[str]) -> None:
    """Whatever the values (escaping triples # and %, a character takes up to 4 bytes)."""
    builds: list[tuple[Callable[[], dict[str, str]], dict[str, int]]] = [
        (lambda: user.key("acme", value), {"PK": 2048, "SK": 1024}),
        (lambda: user.gsi1_key("acme", T0, value), {"GSI1PK": 2048, "GSI1SK": 1024}),
        (lambda: org_node.key("acme", path), {"PK": 2048, "SK": 1024}),
    ]
    for build, limits in builds:
        try:
            key = build()
        except KeyTooLong:
            continue
        assert all(len(key[name].encode()) <= limit for name, limit in limits.items())


def test_lint_counts_one_byte_for_a_plain_ascii_class() -> None:
    assert character_bytes("^[0-9A-Za-z]+$") == (1, None)
    assert character_bytes("^[A-Z]{3}$") == (1, 3)
    assert character_bytes("^[a-z#]{1,8}$") == (3, 8)
    assert character_bytes("^[a-zé]+$") == (4, None)
    assert character_bytes("^[^@]+@x$") == (4, None)
    assert character_bytes(None) == (4, None)


SHARED_ID = """
[table]
name = "shared"
partition_key = "PK"
sort_key = "SK"
tenancy = "global"

[entities.User]
type = "USER"
attributes.user_id = { type = "id" }
keys.PK = "USER#{user_id}"
keys.SK = "PROFILE"

[entities.Badge]
type = "BADGE"
attributes.user_id = { type = "id", max_length = 40 }
keys.PK = "BADGE#{user_id}"
keys.SK = "BADGE"

[entities.Order]
type = "ORDER"
attributes.user_id = { type = "id" }
attributes.order_id = { type = "id" }
keys.PK = "ORDER#{order_id}"
keys.SK = "{user_id}#{order_id}"

[entities.OrderCopy]
type = "ORDER_COPY"
attributes_from = "Order"
keys.PK = "USER#{user_id}"
keys.SK = "ORDER#{order_id}"
"""


def test_an_id_too_long_for_a_key_is_narrowed_wherever_it_is_the_same_id() -> None:
    """Narrowing Order's user_id alone would leave users whose ids no order can hold: the fix
    narrows every declaration of the id (once for an entity taking attributes_from another;
    not one already as narrow), and the message lists them all."""
    with pytest.raises(SpecErrors) as caught:
        pipeline.analyse(SHARED_ID, "spec.toml")
    (problem,) = caught.value.problems
    assert problem.path == "entities.Order.keys.SK"
    assert "everywhere it is the same id (entities.User.attributes.user_id, " in problem.message
    assert (
        "entities.Badge.attributes.user_id, entities.Order.attributes.user_id)" in problem.message
    )
    assert problem.fix == (
        Edit("entities.User", "attributes.user_id", '{ type = "id", max_length = 127 }'),
        Edit("entities.Order", "attributes.user_id", '{ type = "id", max_length = 127 }'),
    )
    pipeline.analyse(apply(SHARED_ID, problem.fix), "spec.toml")

"""Properties of the generated key builders and parsers: they round-trip, distinct inputs
give distinct keys, keys sort like their values, and no value can reach another item."""

from __future__ import annotations

from datetime import UTC, datetime

from hypothesis import given, settings
from hypothesis import strategies as st

from generated.keys import group, membership, org_node, user, user_order
from generated.queries import org_node as org_node_queries
from generated.queries import user_order as user_order_queries
from keygraph import keycodec
from keygraph.errors import BadArgument

# Values users can send: delimiters, escape characters, unicode and case variants.
tricky = st.text(alphabet=st.sampled_from("aAzZ09#%_-:é漢 \u200b"), min_size=1, max_size=8)
values = st.one_of(tricky, st.text(min_size=1, max_size=12))
paths = st.lists(tricky, min_size=1, max_size=4).map(tuple)
times = st.datetimes(
    min_value=datetime(1970, 1, 1), max_value=datetime(9999, 1, 1), timezones=st.just(UTC)
)
SETTINGS = settings(max_examples=75, deadline=None)


@SETTINGS
@given(tenant=values, user_id=values, at=times, order_id=values)
def test_keys_parse_back_to_their_values(
    tenant: str, user_id: str, at: datetime, order_id: str
) -> None:
    assert user.parse_key(user.key(tenant, user_id)) == (tenant, user_id)
    parts = user_order.parse_key(user_order.key(tenant, user_id, at, order_id))
    assert parts == (tenant, user_id, at, order_id)


@SETTINGS
@given(a=st.tuples(values, values, values), b=st.tuples(values, values, values))
def test_distinct_values_give_distinct_keys(
    a: tuple[str, str, str], b: tuple[str, str, str]
) -> None:
    same_key = membership.key(*a) == membership.key(*b)
    assert same_key == (a == b)
    assert (user.key(*a[:2]) == user.key(*b[:2])) == (a[:2] == b[:2])


@SETTINGS
@given(a=st.tuples(values, values), b=st.tuples(values, values))
def test_a_partition_holds_only_its_own_tenant_and_user(
    a: tuple[str, str], b: tuple[str, str]
) -> None:
    """A query for (tenant, user) a never reads an item keyed for b != a."""
    plan = user_order_queries.plan_user_orders(*a, limit=10)
    item_key = user_order.key(b[0], b[1], datetime(2024, 1, 1, tzinfo=UTC), "o")
    assert (plan.partition == item_key["PK"]) == (a == b)
    assert plan.sort is not None
    assert item_key["SK"].startswith(plan.sort.value)


@SETTINGS
@given(tenant=values, parent=paths, node=paths)
def test_a_subtree_prefix_matches_exactly_the_descendants(
    tenant: str, parent: tuple[str, ...], node: tuple[str, ...]
) -> None:
    plan = org_node_queries.plan_org_subtree(tenant, parent, limit=10)
    assert plan.sort is not None
    sort_key = org_node.key(tenant, node)["SK"]
    is_descendant = len(node) > len(parent) and node[: len(parent)] == parent
    assert sort_key.startswith(plan.sort.value) == is_descendant


@SETTINGS
@given(a=times, b=times, tenant=values)
def test_datetime_keys_sort_like_the_datetimes(a: datetime, b: datetime, tenant: str) -> None:
    key_a = user_order.key(tenant, "u", a, "o")["SK"]
    key_b = user_order.key(tenant, "u", b, "o")["SK"]
    assert (key_a < key_b) == (a < b)


@SETTINGS
@given(value=values)
def test_escaped_values_hold_no_delimiter(value: str) -> None:
    escaped = keycodec.escape(value)
    assert "#" not in escaped
    assert keycodec.unescape(escaped) == value


@SETTINGS
@given(pk=st.text(alphabet="T#acme%23USER", max_size=20), sk=st.sampled_from(["PROFILE", "X"]))
def test_parsers_accept_only_keys_their_builder_makes(pk: str, sk: str) -> None:
    try:
        parts = user.parse_key({"PK": pk, "SK": sk})
    except BadArgument:
        return
    assert user.key(*parts) == {"PK": pk, "SK": sk}


@SETTINGS
@given(a=st.tuples(values, values, values), b=st.tuples(values, values))
def test_no_value_reaches_another_entitys_key(a: tuple[str, str, str], b: tuple[str, str]) -> None:
    """Whatever users type (delimiters, escapes, other entities' literals, case variants),
    a membership stays a membership and a user a user."""
    tenant, user_id, group_id = a
    sort_key = membership.key(tenant, user_id, group_id)["SK"]
    assert sort_key.startswith("GROUP#")
    assert sort_key.count("#") == 1
    assert user.key(tenant, user_id)["PK"] != group.key(*b)["PK"]
    injected = f"{user_id}#ORDER#{group_id}"
    assert not membership.key(tenant, injected, injected)["SK"].startswith("GROUP#ORDER#")

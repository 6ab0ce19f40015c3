"""Local ids (ULIDs) and global ids."""

from __future__ import annotations

import random
import string

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from keygraph.ids import new_id, ulid
from server.errors import BadUserInput
from server.graphql.ids import from_global_id, to_global_id

CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


def reference_ulid(millis: int, entropy: int) -> str:
    """The ULID spelled out: 26 groups of five bits, most significant first."""
    value = millis << 80 | entropy & ((1 << 80) - 1)
    return "".join(CROCKFORD[(value >> shift) & 31] for shift in range(125, -1, -5))


@pytest.mark.parametrize(
    ("millis", "entropy"),
    [(0, 0), ((1 << 48) - 1, (1 << 80) - 1), (1_700_000_000_000, 1), (1, 1 << 79)],
)
def test_ulid_matches_the_reference_at_the_edges(millis: int, entropy: int) -> None:
    assert ulid(millis, entropy) == reference_ulid(millis, entropy)


def test_ulid_matches_the_reference_on_random_values() -> None:
    rng = random.Random(7)
    for _ in range(2000):
        millis, entropy = rng.getrandbits(48), rng.getrandbits(80)
        assert ulid(millis, entropy) == reference_ulid(millis, entropy)


def test_ulid_ignores_entropy_past_80_bits() -> None:
    assert ulid(5, (1 << 80) | 3) == ulid(5, 3)


def test_ulids_sort_by_time() -> None:
    assert ulid(1000, (1 << 80) - 1) < ulid(1001, 0)


def test_new_ids_are_26_crockford_characters_and_distinct() -> None:
    ids = {new_id() for _ in range(1000)}
    assert len(ids) == 1000
    assert all(len(i) == 26 and set(i) <= set(CROCKFORD) for i in ids)


def test_global_ids_round_trip_and_reject_garbage() -> None:
    assert from_global_id(to_global_id("User", "01ABC")) == ("User", "01ABC")
    with pytest.raises(BadUserInput):
        from_global_id("not-an-id")


def test_a_global_id_is_read_only_as_it_is_written() -> None:
    local = next(f"01ABC{n}?>" for n in range(1000) if "_" in to_global_id("User", f"01ABC{n}?>"))
    canonical = to_global_id("User", local)
    assert from_global_id(canonical) == ("User", local)
    for other in [
        f"{canonical}=",
        f"{canonical}==",
        canonical.replace("_", "/").replace("-", "+"),  # standard base64's alphabet
        f"{canonical} ",
        f"\t{canonical}",
        f"{canonical[:3]}.{canonical[3:]}",
    ]:
        with pytest.raises(BadUserInput):
            from_global_id(other)


def test_an_error_quotes_only_the_start_of_a_long_id() -> None:
    with pytest.raises(BadUserInput) as raised:
        from_global_id("x" * 100_000)
    assert len(str(raised.value)) < 200
    assert "100000 characters" in str(raised.value)


@given(st.text(alphabet=st.characters(exclude_characters=":"), min_size=1), st.text(min_size=1))
def test_every_global_id_round_trips(type_name: str, local: str) -> None:
    assume(not any(0xD800 <= ord(c) <= 0xDFFF for c in type_name + local))
    assert from_global_id(to_global_id(type_name, local)) == (type_name, local)


@given(st.text(alphabet=string.ascii_letters + string.digits + "-_+/= \n.:", max_size=40))
def test_a_global_id_is_read_only_when_it_is_one_to_global_id_writes(text: str) -> None:
    """Any text is refused as the client's mistake, or is the very id of what it names."""
    try:
        parts = from_global_id(text)
    except BadUserInput:
        return
    assert to_global_id(*parts) == text

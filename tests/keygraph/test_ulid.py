"""Local ids: ULIDs (keygraph/ids.py), spelled as the reference spells them, sorted by time."""

from __future__ import annotations

import random

import pytest

from keygraph.ids import new_id, ulid

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

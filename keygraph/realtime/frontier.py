"""A subscriber's place in the change stream across every shard it was offered: per shard,
the sequence up to which it has the shard's changes (None: none yet). Cursors carry it
packed; a resume turns it back into the positions to replay from (`plan`)."""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Mapping
from dataclasses import dataclass

from keygraph.streams import Position, Shard

SHARD_KEY_BYTES = 6
"""A shard id's hash in a cursor: DynamoDB's ids are about 40 characters; 48 bits tell
apart the few hundred shards a stream keeps."""

Sequences = Mapping[str, str | None]
"""Shard id to the sequence up to which the subscriber has its changes (None: none)."""


@functools.lru_cache(maxsize=4096)
def shard_key(shard_id: str) -> bytes:
    return hashlib.blake2b(shard_id.encode(), digest_size=SHARD_KEY_BYTES).digest()


@dataclass(frozen=True, slots=True)
class Frontier:
    """A decoded cursor: each shard's sequence by its key (`shard_key`)."""

    sequences: Mapping[bytes, str | None]
    whole: bool = True
    """False for a cursor naming one shard only (as cursors did before they carried every
    shard): a resume follows that shard and its descendants, as it did then."""


def merged(*frontiers: Sequences) -> dict[str, str | None]:
    """Each shard at the furthest sequence any of `frontiers` has it."""
    out: dict[str, str | None] = {}
    for frontier in frontiers:
        for shard_id, sequence in frontier.items():
            held = out.get(shard_id)
            if held is None or (sequence is not None and int(sequence) > int(held)):
                out[shard_id] = sequence
    return out


def pack(sequences: Sequences) -> bytes:
    """Per shard, in order of sequence (none first): its key, then 0 for no sequence or
    1 + its leading zeros, then how far its value is past the previous shard's (varints):
    the shards of one stream are numbered close together, so most take a few bytes."""
    out = bytearray()
    previous = 0
    ordered = sorted(sequences.items(), key=lambda item: -1 if item[1] is None else int(item[1]))
    for shard_id, sequence in ordered:
        out += shard_key(shard_id)
        if sequence is None:
            out += _varint(0)
            continue
        value = int(sequence)
        out += _varint(1 + len(sequence) - len(str(value)))
        out += _varint(value - previous)
        previous = value
    return bytes(out)


def unpack(data: bytes) -> dict[bytes, str | None]:
    """What `pack` made; ValueError for anything else."""
    out: dict[bytes, str | None] = {}
    at = previous = 0
    while at < len(data):
        key = data[at : at + SHARD_KEY_BYTES]
        if len(key) < SHARD_KEY_BYTES:
            raise ValueError("a shard key is cut short")
        zeros, at = _read_varint(data, at + SHARD_KEY_BYTES)
        if zeros == 0:
            out[key] = None
            continue
        delta, at = _read_varint(data, at)
        previous += delta
        out[key] = "0" * (zeros - 1) + str(previous)
    return out


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if at >= len(data) or shift > 256:
            raise ValueError("a number is cut short")
        byte = data[at]
        value |= (byte & 0x7F) << shift
        at, shift = at + 1, shift + 7
        if not byte & 0x80:
            return value, at


@dataclass(frozen=True, slots=True)
class Plan:
    """Where a resume reads, in lineage order, and whether the cursor names a shard the
    stream no longer keeps (changes after it may be gone)."""

    positions: list[Position]
    lost: bool


def plan(shards: list[Shard], frontier: Frontier) -> Plan:
    """Every shard of the cursor after its sequence, every descendant of one from its start,
    and every other shard from its start (a shard made later: a new root) unless it is an
    ancestor of one of the cursor's (its changes are the subscriber's already). A cursor of
    one shard reads that shard's lineage only, or everything kept once its shard is gone."""
    sequences = frontier.sequences
    parents = {shard.shard_id: shard.parent_id for shard in shards}
    keys = {shard.shard_id: shard_key(shard.shard_id) for shard in shards}
    lost = len(set(sequences) - set(keys.values())) > 0
    ancestors: set[str] = set()
    for shard_id, key in keys.items():
        if key in sequences:
            parent = parents[shard_id]
            while parent in parents and parent not in ancestors:
                ancestors.add(parent)
                parent = parents[parent]
    whole = frontier.whole or lost
    positions: list[Position] = []
    for shard in shards:
        key = keys[shard.shard_id]
        if key in sequences:
            positions.append(Position(shard.shard_id, sequences[key]))
        elif shard.shard_id not in ancestors and (whole or _descends(shard, parents, sequences)):
            positions.append(Position(shard.shard_id))
    return Plan(positions, lost)


def _descends(
    shard: Shard, parents: Mapping[str, str | None], sequences: Mapping[bytes, object]
) -> bool:
    parent = shard.parent_id
    while parent is not None:
        if shard_key(parent) in sequences:
            return True
        parent = parents.get(parent)
    return False

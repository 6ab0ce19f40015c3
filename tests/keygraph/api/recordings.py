"""The hand-written server's answers that this repository's API compiled from the spec is
held to (tests/keygraph/api/recorded/): its schema as it printed it, and its answers to the
test_repository_* tests, recorded over the same seeded stores and writes before it was
retired. KEYGRAPH_UPDATE_GOLDENS=1 rewrites the answers from the compiled API's own (a
change made on purpose); the schema stays as the hand-written server declared it."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from graphql import GraphQLSchema, build_schema

RECORDED = Path(__file__).with_name("recorded")
UPDATE = os.environ.get("KEYGRAPH_UPDATE_GOLDENS") == "1"


def hand_schema() -> GraphQLSchema:
    """The hand-written server's schema (Query, Mutation and Subscription) as it served it."""
    return build_schema((RECORDED / "hand_schema.graphql").read_text(encoding="utf-8"))


def recorded(name: str, found: Any) -> tuple[Any, Any]:
    """`found` as JSON reads it back, and the answers recorded under `name`; rewritten from
    `found` first under KEYGRAPH_UPDATE_GOLDENS=1."""
    path = RECORDED / f"{name}.json"
    text = json.dumps(found, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    return json.loads(text), json.loads(path.read_text(encoding="utf-8"))


def numbered(value: Any, keys: frozenset[str], seen: dict[str, str] | None = None) -> Any:
    """`value` with each text under one of `keys` (the ids a write made, new each run)
    replaced by its place among them in order of appearance: `#1`, `#2`..."""
    seen = {} if seen is None else seen
    if isinstance(value, dict):
        return {
            key: seen.setdefault(item, f"#{len(seen) + 1}")
            if key in keys and isinstance(item, str)
            else numbered(item, keys, seen)
            for key, item in value.items()
        }
    if isinstance(value, list):
        return [numbered(item, keys, seen) for item in value]
    return value

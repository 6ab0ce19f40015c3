"""How a path reads in its entity's global id: `id_separator` joins its parts there, which
api.py binds on the node's key and its by-id root field alone; it stores nothing, so the
fingerprint, which table migrations check, ignores it."""

from __future__ import annotations

import re
from pathlib import Path

from codegen import pipeline

SPEC = Path(__file__).parents[2] / "access_patterns.toml"
SEPARATOR = ', id_separator = "."'


def _generated(text: str) -> dict[str, str]:
    return pipeline.generate(text, "access_patterns.toml", "generated")


def _fingerprint(files: dict[str, str]) -> str:
    found = re.search(r'FINGERPRINT = "(\w+)"', files["entities.py"])
    assert found is not None
    return found.group(1)


def test_a_separator_binds_the_node_and_its_get_by_id_and_stores_nothing() -> None:
    text = SPEC.read_text(encoding="utf-8")
    assert text.count(SEPARATOR) == 1
    joined, listed = _generated(text), _generated(text.replace(SEPARATOR, ""))
    bound = 'Arg("path", "path", "Path", separator=".")'
    assert joined["api.py"].count(bound) == 2  # OrgNode's node, and orgNode(id:)
    assert "separator=" not in listed["api.py"]
    assert _fingerprint(joined) == _fingerprint(listed)
    assert joined["api.graphql"] == listed["api.graphql"]

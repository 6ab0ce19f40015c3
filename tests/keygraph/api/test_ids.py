"""A generated API's global ids: base64url of `Type:` and the key's parts as compact JSON,
whatever the parts hold, and read back to the same parts."""

from __future__ import annotations

import base64
import json

from hypothesis import given
from hypothesis import strategies as st

from keygraph.api.ids import global_id, parse_global_id


def _spelled(type_name: str, parts: list[object]) -> str:
    text = type_name + ":" + json.dumps(parts, separators=(",", ":"))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@given(st.lists(st.one_of(st.text(), st.integers()), min_size=1, max_size=3))
def test_an_id_is_its_key_as_compact_json_and_reads_back(parts: list[object]) -> None:
    made = global_id("User", parts)
    assert made == _spelled("User", parts)
    assert parse_global_id(made) == ("User", parts)

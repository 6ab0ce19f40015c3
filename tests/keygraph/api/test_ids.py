"""A generated API's global ids: base64url of `Type:` and the key's parts as compact JSON,
whatever the parts hold (one text part as it is), read back to the same parts; another
spelling of the same bytes is no id, nor are parts nested deeper than a key's; a path with
an id separator is its parts joined, and no other spelling fits its key."""

from __future__ import annotations

import base64
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from keygraph.api.bindings import Arg
from keygraph.api.ids import global_id, id_part, key_values, parse_global_id
from keygraph.errors import BadArgument


def _spelled(type_name: str, parts: list[object]) -> str:
    (one,) = parts if len(parts) == 1 else (None,)
    plain = isinstance(one, str) and one[:1] not in ("", "[")
    text = type_name + ":" + (str(one) if plain else json.dumps(parts, separators=(",", ":")))
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


@given(st.lists(st.one_of(st.text(), st.integers()), min_size=1, max_size=3))
def test_an_id_is_its_key_as_compact_json_and_reads_back(parts: list[object]) -> None:
    made = global_id("User", parts)
    assert made == _spelled("User", parts)
    assert parse_global_id(made) == ("User", parts)


@given(st.text(min_size=1).filter(lambda t: not t.startswith("[")))
def test_one_text_part_is_spelled_as_it_is_and_no_other_way(part: str) -> None:
    made = global_id("Order", [part])
    assert base64.urlsafe_b64decode(made + "=" * (-len(made) % 4)).decode() == f"Order:{part}"
    others = [
        _encoded(f"Order:{json.dumps([part])}"),  # the same key as a JSON list
        made + "=" * (-len(made) % 4 or 4),  # padded
        *_stray_bits(made),  # the same bytes, other bits in its last character
    ]
    for other in others:
        with pytest.raises(BadArgument):
            parse_global_id(other)


def _encoded(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


def _stray_bits(made: str) -> list[str]:
    """The id with its last character changed where the change decodes to the same bytes."""
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    decoded = _decoded(made)
    return [
        other for c in alphabet if (other := made[:-1] + c) != made and _decoded(other) == decoded
    ][:1]


def _decoded(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


@pytest.mark.parametrize(
    "text",
    [
        "User:" + "[" * 3000 + "]" * 3000,  # past the recursion limit as JSON
        "OrgNode:[" + "[" * 500 + "]" * 500 + "]",  # within it, nested past any key's parts
        'OrgNode:[["a",["b"]]]',
        'Address:["a",{"b":1}]',
        'Shop:[{"":[]}]',
    ],
)
def test_parts_nested_past_a_key_are_no_id(text: str) -> None:
    with pytest.raises(BadArgument, match="not a global id"):
        parse_global_id(_encoded(text))


def test_a_path_is_a_part() -> None:
    made = global_id("OrgNode", [("a", "b")])
    assert parse_global_id(made) == ("OrgNode", [["a", "b"]])


DOTTED = (Arg("path", "path", "Path", separator="."),)


def _dotted_id(path: tuple[str, ...]) -> str:
    return global_id("OrgNode", [id_part(DOTTED[0], path)])


def test_a_path_with_a_separator_is_its_parts_joined() -> None:
    made = _dotted_id(("a", "b"))
    assert _decoded(made) == b"OrgNode:a.b"
    assert key_values(DOTTED, parse_global_id(made)[1], {}) == [("a", "b")]


@given(st.lists(st.text(max_size=4), min_size=1, max_size=4))
def test_a_path_with_a_separator_reads_back_and_is_spelled_one_way(parts: list[str]) -> None:
    path = tuple(parts)
    made = _dotted_id(path)
    _, raw = parse_global_id(made)
    assert key_values(DOTTED, raw, {}) == [path]
    joinable = all(part and "." not in part for part in path)
    listed = _encoded("OrgNode:" + json.dumps([list(path)], separators=(",", ":")))
    assert (made == listed) is not joinable  # a list only when joined would name another
    other = listed if joinable else _encoded("OrgNode:" + ".".join(path))
    assert _read(other) != [path]


def _read(made: str) -> list[object] | None:
    """The key a dotted id names, None when it names none."""
    try:
        return key_values(DOTTED, parse_global_id(made)[1], {})
    except BadArgument:
        return None


@pytest.mark.parametrize(
    "text",
    [
        'OrgNode:[["a","b"]]',  # the list spelling of a path that joins
        "OrgNode:a..b",  # an empty part
        "OrgNode:a.",
        'OrgNode:[""]',
        "OrgNode:[1]",
        'OrgNode:[["a",1]]',
    ],
)
def test_other_spellings_of_a_separated_path_do_not_fit(text: str) -> None:
    with pytest.raises(BadArgument):
        key_values(DOTTED, parse_global_id(_encoded(text))[1], {})


@pytest.mark.parametrize("text", [":x", ':["x"]', "", ":"])
def test_an_id_without_a_type_name_is_no_id(text: str) -> None:
    """No type is named: the client sent no id, not an id of a type unknown (null)."""
    with pytest.raises(BadArgument, match="not a global id"):
        parse_global_id(_encoded(text))

"""A document's literals found in its text (keygraph/serve/literals.py), which `keygraph
serve` lifts into variables to find a document of a shape it prepared before."""

from __future__ import annotations

import pytest

from keygraph.serve.literals import split


@pytest.mark.parametrize(
    ("text", "literals"),
    [
        ('{ a(x: "1", y: 2) }', ['"1"', "2"]),
        ("{ user2(id: -3.5e2) }", ["-3.5e2"]),
        ('# "not" 1\n{ a(x: """b"c""") }', ['"""b"c"""']),
        ('{ a(x: "q\\"uote") }', ['"q\\"uote"']),
        ("{ a { b } }", []),
    ],
)
def test_literals_are_split_out_of_the_text(text: str, literals: list[str]) -> None:
    found = split(text)
    assert ([text[start:end] for start, end in found.spans] if found else []) == literals

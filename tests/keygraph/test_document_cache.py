"""The prepared documents `keygraph serve` keeps (keygraph/serve/document_cache.py), bounded
by their count and by the characters of their texts, the least recently used going first."""

from __future__ import annotations

from keygraph.serve.document_cache import DocumentCache


def test_the_cache_is_bounded_by_entries_and_characters() -> None:
    cache = DocumentCache(max_entries=3, max_chars=10)
    for key in "abcd":
        cache.put(key, key.upper(), 1)
    assert [cache.get(key) for key in "abcd"] == [None, "B", "C", "D"]
    cache.get("b")
    cache.put("e", "E", 8)  # 11 characters: the least recently used goes (c)
    assert [cache.get(key) for key in "bcde"] == ["B", None, "D", "E"]
    assert (len(cache), cache.chars) == (3, 10)
    cache.put("huge", "H", 11)
    assert cache.get("huge") is None
    assert cache.chars == 10

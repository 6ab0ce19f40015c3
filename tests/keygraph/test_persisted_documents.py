"""The documents `keygraph serve` keeps by their hash (keygraph/serve/persisted.py), bounded
by count and bytes, the least recently used going first, each text kept as one object."""

from __future__ import annotations

from keygraph.serve import persisted as apq


def test_registered_documents_are_bounded_by_count_and_bytes() -> None:
    documents = apq.Documents(max_documents=2, max_bytes=100)
    documents.register("a", "x" * 10)
    documents.register("b", "y" * 10)
    documents.get("a")  # b is now the least recently used
    documents.register("c", "z" * 10)
    assert documents.get("b") is None
    assert documents.get("a")
    assert len(documents) == 2
    documents.register("d", "w" * 95)  # over the bytes with any other: both go
    assert documents.get("a") is None
    assert documents.get("c") is None
    assert documents.get("d") == "w" * 95
    documents.register("e", "v" * 101)  # larger than all: never kept
    assert documents.get("e") is None
    assert documents.get("d")


def test_a_registered_text_is_kept_as_one_object() -> None:
    documents = apq.Documents()
    first = "".join(["{ viewer ", "{ tenant } }"])
    again = "".join(["{ viewer { ", "tenant } }"])
    assert documents.register("k", first) is first
    assert documents.register("k", again) is first  # the prepare cache hits on identity

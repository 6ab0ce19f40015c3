"""The hostile-documents bench run once per document: every shape is answered, and the
22-level document is refused as too complex."""

import asyncio

from bench.hostile_docs import run


def test_every_hostile_document_gets_an_answer() -> None:
    found = asyncio.run(run(repeats=1))
    assert found["22 levels of doubling fragments"]["answer"] == "QUERY_TOO_COMPLEX"
    measured = [found["22 levels of doubling fragments"]]
    for shape in found.values():
        measured.extend(shape.get(part) for part in ("body", "document") if part in shape)
    assert len(measured) > 10
    for one in measured:
        assert one["status"] < 500, one
        assert "INTERNAL" not in one["answer"], one

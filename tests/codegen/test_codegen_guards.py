"""A package generated from a spec with access rules asks each pattern's guard with the
session's caller and the pattern's arguments before any store call; a session without a
caller (the server's own) is not asked about."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from keygraph import CursorCodec, Session
from keygraph.caller import Caller
from keygraph.errors import Forbidden
from keygraph.plan import Put
from tests.conftest import StoreFactory
from tests.packages import Importer, generated

SPEC = Path(__file__).with_name("cases") / "authorization" / "spec.toml"
CODEC = CursorCodec(b"k" * 32)


@pytest.fixture(scope="module")
def pkg(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Importer]:
    with generated(SPEC, "guarded", tmp_path_factory.mktemp("guarded")) as importer:
        yield importer


class NoStore:
    """A store every call to which fails the test."""

    def __getattr__(self, name: str) -> Any:
        raise AssertionError(f"store.{name} called")


def _member(sub: str, **claims: str) -> Caller:
    return Caller(sub, frozenset({"member"}), claims)


@pytest.mark.parametrize(
    ("caller", "call"),
    [
        (_member("bob"), "user_notes"),
        (_member("ann", suspended="yes"), "user_notes"),
        (_member("bob"), "get_notes"),
        (Caller("ann", frozenset({"auditor"}), {"region": "none"}), "get_notes"),
    ],
    ids=["other-user", "suspended-owner", "batch-other-user", "auditor-without-region"],
)
async def test_a_refused_caller_gets_forbidden_before_any_store_call(
    pkg: Importer, caller: Caller, call: str
) -> None:
    notes = pkg("queries.note")
    session = Session(NoStore(), CODEC, caller)
    run = (
        notes.user_notes(session, "t", "ann")
        if call == "user_notes"
        else notes.get_notes(session, "t", [("ann", "n1"), ("bob", "n2")])
    )
    with pytest.raises(Forbidden, match=call):
        await run


async def test_allowed_callers_and_the_server_read(
    pkg: Importer, store_factory: StoreFactory
) -> None:
    store = await store_factory("embedded", pkg("table").TABLE)
    note = pkg("models.note").Note(user_id="ann", note_id="n1", text="hi")
    await store.put(Put(note.to_item("t")))
    notes = pkg("queries.note")
    for caller in (
        _member("ann"),
        Caller("x", frozenset({"auditor"}), {"region": "eu"}),
        None,
    ):
        session = Session(store, CODEC, caller)
        page = await notes.user_notes(session, "t", "ann")
        assert [n.text for n in page.items] == ["hi"]
        assert [n.text for n in await notes.get_notes(session, "t", [("ann", "n1")]) if n] == ["hi"]

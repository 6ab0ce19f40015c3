"""`python -m server table plan | migrate` end to end on the embedded store, with the library
specs: a saved plan carried out, a second run that writes nothing, a saved plan that no
longer fits, a change refused with its procedure, and a store lost mid-way."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from keygraph.errors import StoreUnavailable
from keygraph.migrate import run as run_module
from keygraph.plan import Put
from keygraph.stores.embedded.store import EmbeddedStore
from server.cli import main
from tests.keygraph.migrate.test_migrate import BOOKS, HERE, library
from tests.packages import Importer, generated


@pytest.fixture(scope="module")
def v3(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Importer]:
    root = tmp_path_factory.mktemp("v3")
    with generated(HERE / "spec_v3_moved.toml", "library_v3", root) as pkg:
        yield pkg


@pytest.fixture
def data(tmp_path: Path, v1: Importer) -> Path:
    """A data directory whose embedded store holds acme's library under v1."""

    async def load() -> None:
        store = EmbeddedStore(v1("table").TABLE, path=tmp_path / "keygraph.sqlite3")
        for item in library(v1, "acme"):
            await store.put(Put(item))
        await store.close()

    asyncio.run(load())
    return tmp_path


def table(data: Path, *args: str) -> int:
    return main(["table", *args, "--data", str(data), "--no-progress"])


def test_a_saved_plan_is_carried_out_once(
    data: Path, v2: Importer, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = data / "plan.json"
    assert table(data, "plan", "--package", "library_v2", "--out", str(plan)) == 0
    printed = capsys.readouterr().out
    assert "1. create index GSI2 (GSI2PK, GSI2SK, ALL)" in printed
    assert f"2. backfill Book: {BOOKS} of {BOOKS} items (GSI1SK, GSI2PK, GSI2SK)" in printed
    assert json.loads(plan.read_text())["backfill"]["Book"]["to_update"] == BOOKS
    assert table(data, "migrate", "--package", "library_v2", "--plan", str(plan)) == 0
    printed = capsys.readouterr().out
    assert f"{BOOKS} updated (Book {BOOKS})" in printed
    assert table(data, "migrate", "--package", "library_v2") == 0
    printed = capsys.readouterr().out
    assert "nothing to do" in printed
    assert "0 updated" in printed


def test_a_saved_plan_that_no_longer_fits_is_refused(
    data: Path, v1: Importer, v2: Importer, capsys: pytest.CaptureFixture[str]
) -> None:
    plan = data / "plan.json"
    assert table(data, "plan", "--package", "library_v2", "--out", str(plan)) == 0
    assert table(data, "migrate", "--package", "library_v2", "--plan", str(plan)) == 0
    capsys.readouterr()
    # the index the plan would create exists now: the table changed since the plan
    assert table(data, "migrate", "--package", "library_v2", "--plan", str(plan)) == 2
    assert "changed since the plan" in capsys.readouterr().err
    assert table(data, "migrate", "--package", "library_v1", "--plan", str(plan)) == 2
    assert "plan again" in capsys.readouterr().err


def test_a_primary_key_change_is_refused_with_the_procedure(
    data: Path, v3: Importer, capsys: pytest.CaptureFixture[str]
) -> None:
    assert table(data, "plan", "--package", "library_v3") == 1
    printed = capsys.readouterr().out
    assert "refused: primary key of Book changes" in printed
    assert "dual write" in printed
    assert "shadow read" in printed
    assert table(data, "migrate", "--package", "library_v3") == 1
    assert "nothing written" in capsys.readouterr().err
    assert table(data, "plan", "--package", "library_v2") == 0  # the data is as it was
    assert f"backfill Book: {BOOKS} of {BOOKS}" in capsys.readouterr().out


def test_a_store_lost_mid_way_leaves_a_checkpoint_to_continue_from(
    data: Path,
    v2: Importer,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from keygraph.migrate import plan as plan_module

    monkeypatch.setattr(plan_module, "PAGE", 10)
    real = run_module._apply
    written = 0

    async def failing(store: Any, update: Any) -> bool:
        nonlocal written
        if written == 25:
            raise StoreUnavailable("connection refused")
        written += 1
        return await real(store, update)

    monkeypatch.setattr(run_module, "_apply", failing)
    assert table(data, "migrate", "--package", "library_v2") == 3
    assert "run again to continue" in capsys.readouterr().err
    monkeypatch.setattr(run_module, "_apply", real)
    assert table(data, "migrate", "--package", "library_v2") == 0
    printed = capsys.readouterr().out
    assert "resumed after 20 items" in printed
    assert table(data, "plan", "--package", "library_v2") == 0
    assert "nothing to do" in capsys.readouterr().out

"""A serving app tunes the garbage collector when it starts (checked in a fresh interpreter,
so this test process keeps its own settings)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from server.settings import GC_YOUNG_THRESHOLD

STARTS_AN_APP = """
import asyncio, gc, json, sys
from pathlib import Path
from server.edge.app import create_app
from server.settings import Settings
from keygraph.stores.embedded.store import EmbeddedStore
from generated.table import TABLE

async def main() -> None:
    before = gc.get_threshold()
    settings = Settings(
        data_dir=Path(sys.argv[1]), jwt_secret="s" * 32, **json.loads(sys.argv[2])
    ).resolved()
    app = create_app(settings, EmbeddedStore(TABLE, path=Path(sys.argv[1]) / "db.sqlite3"))
    async with app.router.lifespan_context(app):
        print(json.dumps({"before": before, "after": gc.get_threshold(),
                          "frozen": gc.get_freeze_count()}))

asyncio.run(main())
"""


def _start_an_app(tmp_path: Path, **settings: Any) -> Any:
    """The thresholds before and after an app's start-up, and the objects it froze."""
    out = subprocess.run(
        [sys.executable, "-c", STARTS_AN_APP, str(tmp_path), json.dumps(settings)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[3],
    ).stdout
    return json.loads(out)


def test_an_app_starting_up_freezes_its_heap_and_sets_the_young_threshold(
    tmp_path: Path,
) -> None:
    seen = _start_an_app(tmp_path)
    assert seen["after"] == [GC_YOUNG_THRESHOLD, *seen["before"][1:]]
    assert seen["frozen"] > 10_000  # modules, the schema and the app, built before serving


def test_the_young_threshold_is_the_setting(tmp_path: Path) -> None:
    seen = _start_an_app(tmp_path, gc_young_threshold=4321)
    assert seen["after"] == [4321, *seen["before"][1:]]

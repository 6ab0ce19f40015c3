"""A serving process tunes the garbage collector once its app is built (checked in a fresh
interpreter, so this test process keeps its own settings), and the repository's server
passes its setting through."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

from keygraph.serve.gc_tuning import GC_YOUNG_THRESHOLD
from keygraph.serve.serving import Listening
from server.serving.serve import listening
from server.settings import Settings

BUILDS_AN_APP = """
import gc, json, sys
from pathlib import Path
from generated.table import TABLE
from keygraph.serve.package import served
from keygraph.serve.serving import Listening, config
from keygraph.stores.embedded.store import EmbeddedStore

before = gc.get_threshold()
store = EmbeddedStore(TABLE, path=Path(sys.argv[1]) / "db.sqlite3")
config(served("generated", store, "s" * 32), Listening(**json.loads(sys.argv[2])))
print(json.dumps({"before": before, "after": gc.get_threshold(),
                  "frozen": gc.get_freeze_count()}))
"""


def _build_an_app(tmp_path: Path, **listening: Any) -> Any:
    """The thresholds before and after an app is built to serve, and the objects frozen."""
    out = subprocess.run(
        [sys.executable, "-c", BUILDS_AN_APP, str(tmp_path), json.dumps(listening)],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).resolve().parents[3],
    ).stdout
    return json.loads(out)


def test_an_app_built_to_serve_freezes_its_heap_and_sets_the_young_threshold(
    tmp_path: Path,
) -> None:
    seen = _build_an_app(tmp_path)
    assert seen["after"] == [GC_YOUNG_THRESHOLD, *seen["before"][1:]]
    assert seen["frozen"] > 10_000  # modules, the schema and the app, built before serving


def test_the_young_threshold_is_the_listening_s_and_none_keeps_python_s(
    tmp_path: Path,
) -> None:
    assert _build_an_app(tmp_path, gc_young_threshold=4321)["after"][0] == 4321
    kept = _build_an_app(tmp_path, gc_young_threshold=None)
    assert kept["after"] == kept["before"]
    assert kept["frozen"] == 0


def test_the_server_serves_with_its_setting(tmp_path: Path) -> None:
    settings = Settings(data_dir=tmp_path, jwt_secret="s" * 32, gc_young_threshold=4321)
    assert listening(settings.resolved()).gc_young_threshold == 4321
    assert Listening().gc_young_threshold == GC_YOUNG_THRESHOLD

"""The whole harness in quick mode on the embedded store, in-process (the HTTP path's parts
are tested on their own: the load generator here, the servers by the full run)."""

import json
from pathlib import Path

from bench.run import main


def test_quick_run_measures_every_operation(tmp_path: Path) -> None:
    out = tmp_path / "quick.json"
    results = main(["--quick", "--store", "embedded", "--no-http", "--out", str(out)])
    assert json.loads(out.read_text()) == json.loads(json.dumps(results))
    assert results["mode"] == "quick"
    ops = results["stores"]["embedded"]["operations"]
    assert list(ops) == ["Q1", "Q2", "Q3", "Q4", "Q5", "Q6", "M1"]
    for name, op in ops.items():
        assert op["matches_floor"], f"{name}: keygraph and the floor answer differently"
        counts = op["counts"]["keygraph"]
        assert 1 <= counts["waves"] <= counts["calls"], name
        timed = op["inprocess"]
        assert timed["keygraph"]["errors"] == 0, name
        assert timed["keygraph"]["rps"] > 0, name
        assert timed["vs_floor"] > 0, name
        assert timed["graphql-core"]["errors"] == 0, name
        assert timed["vs_graphql_core"] > 0, name

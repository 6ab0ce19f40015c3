import json
from pathlib import Path
from typing import Any

import pytest

from bench.report import END, START, render, update_readme
from bench.run import carried_over

RESULTS: dict[str, Any] = {
    "machine": {
        "date": "2026-11-22 11:00 UTC",
        "nproc": 2,
        "cpu_model": "AMD EPYC",
        "ram_gib": 23.5,
        "python": "3.11.7",
    },
    "mode": "full",
    "stores": {
        "embedded": {
            "dataset": {"tenants": 2, "sizes": {"users": 2000, "shops": 20000}, "rng_seed": 7},
            "operations": {
                "Q3": {
                    "title": "users",
                    "levels": 3,
                    "counts": {"keygraph": {"calls": 102, "waves": 3}},
                    "inprocess": {
                        "keygraph": {"rps": 25.0, "p50_ms": 40.0, "p99_ms": 55.5},
                        "graphql-core": {"rps": 12.5, "p50_ms": 80.0, "p99_ms": 99.0},
                        "vs_floor": 0.91,
                        "graphql_core_vs_floor": 0.45,
                        "vs_graphql_core": 2.0,
                    },
                    "http": None,
                }
            },
            "peak_rss_mib": {"keygraph": 120.4},
        }
    },
}


def test_render_has_a_row_per_operation_with_its_numbers() -> None:
    table = render(RESULTS)
    row = next(line for line in table.splitlines() if line.startswith("| Q3 "))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    header = next(line for line in table.splitlines() if line.startswith("| op "))
    assert len(cells) == len(header.strip("|").split("|"))
    assert cells[:4] == ["Q3", "users", "3", "102 / 3"]
    assert cells[4:10] == ["25", "40.00", "80.00", "0.91x", "0.45x", "2.00x"]
    assert cells[10:] == ["-"] * 11
    assert "2,000" in table
    assert "keygraph 120 MiB" in table


def test_render_shows_the_servers_cpu_per_request_over_http() -> None:
    block = RESULTS["stores"]["embedded"]
    q3 = block["operations"]["Q3"]
    http = {
        "keygraph": {"rps": 50.0, "p50_ms": 20.0, "p99_ms": 30.0, "cpu_ms": 0.412},
        "graphql-core": {"rps": 20.0, "p50_ms": 50.0, "p99_ms": 60.0, "cpu_ms": 1.5},
        "floor": {"rps": 60.0, "p50_ms": 15.0, "p99_ms": 25.0, "cpu_ms": 0.3},
        "cpu_vs_graphql_core": 3.64,
        "cpu_vs_floor": 0.73,
    }
    operations = {"Q3": {**q3, "http": http}}
    table = render({**RESULTS, "stores": {"embedded": {**block, "operations": operations}}})
    row = next(line for line in table.splitlines() if line.startswith("| Q3 "))
    cells = [cell.strip() for cell in row.strip("|").split("|")]
    assert cells[-5:] == ["0.41", "1.50", "0.30", "3.64x", "0.73x"]


def test_update_readme_replaces_only_between_the_markers(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(f"# head\n{START}\nold\n{END}\n## Codegen\nkept\n")
    update_readme(readme, "new table\n")
    assert readme.read_text() == f"# head\n{START}\nnew table\n{END}\n## Codegen\nkept\n"


def test_update_readme_refuses_a_readme_without_markers(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text("# nothing\n")
    with pytest.raises(ValueError, match="markers"):
        update_readme(readme, "x")


def test_a_store_from_an_earlier_run_gets_its_own_run_line() -> None:
    earlier_machine = {**RESULTS["machine"], "date": "2026-11-21 09:00 UTC"}
    block = RESULTS["stores"]["embedded"]
    results = {
        **RESULTS,
        "stores": {"embedded": block, "dynamodb-local": {**block, "machine": earlier_machine}},
    }
    table = render(results)
    assert table.startswith("Run: 2026-11-22 11:00 UTC")
    assert "_dynamodb-local: Run: 2026-11-21 09:00 UTC" in table
    assert "_embedded:" not in table


def test_a_full_run_of_one_store_keeps_the_other_stores_of_the_last_full_run(
    tmp_path: Path,
) -> None:
    out = tmp_path / "latest.json"
    block = RESULTS["stores"]["embedded"]
    out.write_text(json.dumps({**RESULTS, "stores": {"embedded": block, "dynamodb-local": block}}))
    now = {
        **RESULTS,
        "machine": {**RESULTS["machine"], "date": "later"},
        "stores": {"embedded": block},
    }
    kept = carried_over(now, out)
    assert list(kept) == ["dynamodb-local"]
    assert kept["dynamodb-local"]["machine"]["date"] == "2026-11-22 11:00 UTC"
    assert kept["dynamodb-local"]["operations"] == block["operations"]
    assert carried_over({**now, "mode": "quick"}, out) == {}
    out.write_text(json.dumps({**RESULTS, "mode": "quick"}))
    assert carried_over(now, out) == {}
    assert carried_over(now, tmp_path / "missing.json") == {}

from pathlib import Path

import pytest

from bench.report import END, START, render, update_readme

RESULTS = {
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
                    "counts": {
                        "keygraph": {"calls": 102, "waves": 3},
                        "naive": {"calls": 160, "waves": 4},
                    },
                    "inprocess": {
                        "keygraph": {"rps": 25.0, "p50_ms": 40.0, "p99_ms": 55.5},
                        "vs_floor": 0.91,
                        "naive_speedup": 1.5,
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
    assert cells[:5] == ["Q3", "users", "3", "102 / 3", "160 / 4"]
    assert cells[5:10] == ["25", "40.00", "55.50", "0.91x", "1.50x"]
    assert cells[10:] == ["-"] * 5
    assert "2,000" in table
    assert "keygraph 120 MiB" in table


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

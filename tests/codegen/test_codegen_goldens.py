"""Golden cases: each cases/<case>/spec.toml compiles to cases/<case>/expected/ or fails with
exactly cases/<case>/expected_errors.txt. KEYGRAPH_UPDATE_GOLDENS=1 rewrites them."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from codegen import output, pipeline
from codegen.diagnostics import SpecErrors

CASES = Path(__file__).with_name("cases")
UPDATE = os.environ.get("KEYGRAPH_UPDATE_GOLDENS") == "1"


def _compile(case: Path) -> tuple[dict[str, str] | None, str]:
    try:
        files = pipeline.generate((case / "spec.toml").read_text(encoding="utf-8"), "spec.toml")
        return files, ""
    except SpecErrors as exc:
        return None, "".join(problem.render("spec.toml") + "\n" for problem in exc.problems)


@pytest.mark.parametrize(
    "case", sorted(p for p in CASES.iterdir() if (p / "spec.toml").is_file()), ids=lambda p: p.name
)
def test_golden_case(case: Path) -> None:
    files, errors = _compile(case)
    errors_file, expected_dir = case / "expected_errors.txt", case / "expected"
    if UPDATE:
        if files is None:
            errors_file.write_text(errors, encoding="utf-8")
        else:
            output.write(files, expected_dir)
    if errors_file.exists():
        assert files is None, f"{case.name} compiled but should fail"
        assert errors == errors_file.read_text(encoding="utf-8")
    else:
        assert files is not None, f"{case.name} failed:\n{errors}"
        assert output.diff(files, expected_dir) == ""


def test_generated_packages_import_the_one_runtime() -> None:
    files = pipeline.generate((CASES / "timeseries" / "spec.toml").read_text(), "spec.toml")
    assert not [path for path in files if path.startswith("runtime/")]
    sources = [text for path, text in files.items() if path.endswith(".py")]
    assert any("from keygraph.store import Session" in text for text in sources)
    assert not [text for text in sources if "runtime" in text]


def test_there_are_enough_bad_cases() -> None:
    bad = [p for p in CASES.iterdir() if (p / "expected_errors.txt").is_file()]
    assert len(bad) >= 10

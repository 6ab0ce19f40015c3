"""The generated package's `queries` exports every pattern's function and plan builder by
name, and the worksheet (ACCESS_PATTERNS.md) gives each function's import and signature
as they are."""

from __future__ import annotations

import inspect
import re
import tomllib
from pathlib import Path

import pytest

from codegen import pipeline
from tests.packages import generated

ROOT = Path(__file__).parents[2]
CASES = Path(__file__).with_name("cases")
SPECS = [
    ROOT / "access_patterns.toml",
    *(CASES / case / "spec.toml" for case in ("webshop", "timeseries", "authorization")),
]


_QUALIFIER = re.compile(r"(?:[A-Za-z_]\w*\.)+(?=[A-Za-z_])")
"""The modules before a class's name (keygraph.store.Session): the worksheet names it alone."""


def _case(spec: Path) -> str:
    return spec.parent.name if spec.name == "spec.toml" else "repo"


def _patterns(spec: Path) -> list[str]:
    return list(tomllib.loads(spec.read_text(encoding="utf-8"))["patterns"])


@pytest.mark.parametrize("spec", SPECS, ids=_case)
def test_queries_exports_every_pattern_and_its_plan(spec: Path, tmp_path: Path) -> None:
    with generated(spec, "exported", tmp_path) as pkg:
        queries = pkg("queries")
        names = _patterns(spec)
        assert names
        for name in names:
            assert inspect.iscoroutinefunction(getattr(queries, name)), name
            assert callable(getattr(queries, f"plan_{name}")), name
        assert set(queries.__all__) >= {*names, *(f"plan_{name}" for name in names)}
        assert all(hasattr(queries, name) for name in queries.__all__)


@pytest.mark.parametrize("spec", SPECS, ids=_case)
def test_the_worksheet_gives_each_function_as_it_is(spec: Path, tmp_path: Path) -> None:
    with generated(spec, "worksheet", tmp_path) as pkg:
        queries = pkg("queries")
        sheet = (tmp_path / "worksheet" / "ACCESS_PATTERNS.md").read_text(encoding="utf-8")
        for name in _patterns(spec):
            function = getattr(queries, name)
            signature = _QUALIFIER.sub("", str(inspect.signature(function)))
            assert f"async def {name}{signature}\n" in sheet, name
            module = function.__module__.removeprefix("worksheet.")
            section = sheet.split(f"### `{module.replace('.', '/')}.py`", 1)[1]
            assert f"async def {name}(" in section.split("\n### ", 1)[0], name


def test_the_worksheet_names_the_package_it_was_written_as() -> None:
    spec = CASES / "webshop" / "spec.toml"
    files = pipeline.generate(spec.read_text(encoding="utf-8"), "spec.toml", "webshop")
    assert "`from\nwebshop.queries import <pattern>`" in files["ACCESS_PATTERNS.md"]
    unnamed = pipeline.generate(spec.read_text(encoding="utf-8"), "spec.toml")
    assert re.search(r"from\s+<package>\.queries", unnamed["ACCESS_PATTERNS.md"])

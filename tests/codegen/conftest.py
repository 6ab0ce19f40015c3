"""Fixtures of the codegen tests: generated trees importable under their own package names."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType

import pytest

from codegen import output, pipeline

CASES = Path(__file__).with_name("cases")

Importer = Callable[[str], ModuleType]


@pytest.fixture(scope="module")
def timeseries(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Importer]:
    """Generates the timeseries case as package `ts_generated` and imports its modules."""
    root = tmp_path_factory.mktemp("timeseries")
    spec = CASES / "timeseries" / "spec.toml"
    files = pipeline.generate(spec.read_text(encoding="utf-8"), spec.name)
    output.write(files, root / "ts_generated")
    sys.path.insert(0, str(root))
    try:
        yield lambda name: importlib.import_module(f"ts_generated.{name}")
    finally:
        sys.path.remove(str(root))
        for name in [m for m in sys.modules if m.split(".")[0] == "ts_generated"]:
            del sys.modules[name]

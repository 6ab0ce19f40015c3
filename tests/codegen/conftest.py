"""Fixtures of the codegen tests: generated trees importable under their own package names."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.packages import Importer, generated

CASES = Path(__file__).with_name("cases")


@pytest.fixture(scope="module")
def timeseries(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Importer]:
    """Generates the timeseries case as package `ts_generated` and imports its modules."""
    root = tmp_path_factory.mktemp("timeseries")
    with generated(CASES / "timeseries" / "spec.toml", "ts_generated", root) as importer:
        yield importer

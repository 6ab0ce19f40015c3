"""The library spec, as first deployed (v1) and as it is next (v2), generated as packages."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.packages import Importer, generated

HERE = Path(__file__).parent


@pytest.fixture(scope="session")
def v1(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Importer]:
    with generated(HERE / "spec_v1.toml", "library_v1", tmp_path_factory.mktemp("v1")) as pkg:
        yield pkg


@pytest.fixture(scope="session")
def v2(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Importer]:
    with generated(HERE / "spec_v2.toml", "library_v2", tmp_path_factory.mktemp("v2")) as pkg:
        yield pkg

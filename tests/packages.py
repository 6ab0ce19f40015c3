"""Packages generated from other specs at test time, importable under names of their own."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from types import ModuleType

from codegen import output, pipeline

Importer = Callable[[str], ModuleType]


@contextmanager
def generated(spec: Path, name: str, root: Path) -> Iterator[Importer]:
    """Generates `spec` as package `name` under `root`, importable while the block runs;
    yields an importer of its modules ("table", "queries.book", ...)."""
    files = pipeline.generate(spec.read_text(encoding="utf-8"), spec.name)
    output.write(files, root / name)
    sys.path.insert(0, str(root))
    try:
        yield lambda module: importlib.import_module(f"{name}.{module}")
    finally:
        sys.path.remove(str(root))
        for loaded in [m for m in sys.modules if m.split(".")[0] == name]:
            del sys.modules[loaded]

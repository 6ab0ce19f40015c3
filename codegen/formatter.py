"""Formatting generated Python with `ruff format`, every file in one batch (imports come
already sorted: imports.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path

_SETTINGS = ("--isolated", "--no-cache", "--line-length", "100", "--target-version", "py311")


class FormatError(RuntimeError):
    """ruff is missing or refused the generated code (a bug in codegen's templates)."""


def ruff_binary() -> str:
    """The ruff installed with keygraph (a dependency: the `ruff` package knows where its
    binary went), else the one next to the running interpreter, else the one on PATH."""
    try:
        from ruff import find_ruff_bin

        found: str | None = find_ruff_bin()
    except (ImportError, FileNotFoundError):
        beside = shutil.which("ruff", path=os.path.dirname(sys.executable))
        found = beside or shutil.which("ruff")
    if found is None:
        raise FormatError("ruff not found; install keygraph with its dependencies")
    return found


def _run(args: list[str], cwd: Path) -> None:
    done = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise FormatError(f"{' '.join(args[:2])} failed:\n{done.stdout}{done.stderr}")


def format_python(files: Mapping[str, str]) -> dict[str, str]:
    """The same map with every .py file ruff-formatted."""
    python = {path: text for path, text in files.items() if path.endswith(".py")}
    if not python:
        return dict(files)
    ruff = ruff_binary()
    with tempfile.TemporaryDirectory(prefix="keygraph-codegen-") as tmp:
        root = Path(tmp)
        for path, text in python.items():
            target = root / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        _run([ruff, "format", *_SETTINGS, "."], root)
        formatted = {path: (root / path).read_text(encoding="utf-8") for path in python}
    return {path: formatted.get(path, text) for path, text in files.items()}

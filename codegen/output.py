"""The one place that touches the output directory: writing the tree, and diffing it."""

from __future__ import annotations

import difflib
from collections.abc import Mapping
from pathlib import Path

_IGNORED = ("__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache")


def existing(out: Path) -> dict[str, str]:
    """Files now under `out` (caches ignored), by relative path."""
    if not out.is_dir():
        return {}
    found: dict[str, str] = {}
    for path in sorted(out.rglob("*")):
        relative = path.relative_to(out)
        if path.is_file() and not any(part in _IGNORED for part in relative.parts):
            found[relative.as_posix()] = path.read_text(encoding="utf-8", errors="replace")
    return found


def write(files: Mapping[str, str], out: Path) -> list[str]:
    """Make `out` hold exactly `files`; returns the paths written or removed."""
    current = existing(out)
    touched: list[str] = []
    for relative, text in files.items():
        if current.get(relative) != text:
            target = out / relative
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
            touched.append(relative)
    for relative in sorted(set(current) - set(files)):
        (out / relative).unlink()
        touched.append(relative)
    return touched


def diff(files: Mapping[str, str], out: Path) -> str:
    """A unified diff from what `out` holds to what it should hold; empty when equal."""
    current = existing(out)
    chunks: list[str] = []
    for relative in sorted(set(current) | set(files)):
        old, new = current.get(relative), files.get(relative)
        if old == new:
            continue
        chunks.extend(
            difflib.unified_diff(
                (old or "").splitlines(keepends=True),
                (new or "").splitlines(keepends=True),
                fromfile=f"a/{relative}" if old is not None else "/dev/null",
                tofile=f"b/{relative}" if new is not None else "/dev/null",
            )
        )
    return "".join(chunks)

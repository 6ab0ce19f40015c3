"""The code blocks of the README, docs/ and bench/README.md, by language, for the tests that
run them."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")), ROOT / "bench" / "README.md"]


def blocks(language: str, page: Path | None = None) -> list[str]:
    """Every block fenced as `language`, in page order (one page, or all of them)."""
    found: list[str] = []
    for path in [page] if page is not None else PAGES:
        found += re.findall(rf"```{language}\n(.*?)```", path.read_text(), re.S)
    return found


def languages() -> set[str]:
    """The languages the pages' fenced blocks name."""
    return {m for page in PAGES for m in re.findall(r"^```(\w+)\n", page.read_text(), re.M)}

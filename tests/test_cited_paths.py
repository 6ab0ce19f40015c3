"""Every file or folder of this repository that a doc or a comment names exists: the
backticked paths and link targets of the Markdown pages, and the paths in the comments and
docstrings of the hand-written Python. A path is one that starts at a top folder of the
repository (`server/compiled.py`) or names a file in a folder by its ending (`.py`, `.md`); it
is looked for beside the page or module that names it, then in each folder above. A path
may leave out `.py` (a module) or `.md` (a page), or end in `-` (the start of file names)."""

from __future__ import annotations

import ast
import io
import re
import subprocess
import tokenize
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).parents[1]
TOP = ("bench", "codegen", "docs", "generated", "keygraph", "server", "testkit", "tests")
SKIPPED = ("generated/", "tests/codegen/cases/")
"""What codegen writes, and the specs and packages its tests compile and compare."""
PATH = re.compile(r"(?<![\w./:@<-])((?:[A-Za-z_][\w.-]*/)+(?:[\w-]+(?:\.[a-z0-9]+)?)?)")
ENDINGS = re.compile(r"\.(py|md|toml|json|graphql|j2|sh|ya?ml)$")


def _files() -> list[Path]:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [ROOT / name for name in listed if not name.startswith(SKIPPED)]


def _docstrings(tree: ast.AST) -> Iterator[str]:
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            yield node.value.value


def _prose(path: Path) -> Iterator[str]:
    """What of a file speaks to its reader: a page's code spans and link targets; a
    module's comments and docstrings."""
    text = path.read_text(encoding="utf-8")
    if path.suffix == ".md":
        yield from re.findall(r"`([^`\n]+)`", text)
        yield from re.findall(r"\]\(([^)#\s]+)", text)
    elif path.suffix == ".py":
        yield from _docstrings(ast.parse(text))
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type == tokenize.COMMENT:
                yield token.string


def _cited(text: str) -> Iterator[str]:
    for found in PATH.findall(text):
        path = found.rstrip(".")
        if path.split("/")[0] in TOP or ENDINGS.search(path):
            yield path


def _exists(cited: str, where: Path) -> bool:
    for base in [where.parent, *where.parent.parents]:
        if cited.endswith("-") and any(base.glob(f"{cited}*")):
            return True
        if any((base / f"{cited}{suffix}").exists() for suffix in ("", ".py", ".md")):
            return True
        if base == ROOT:
            return False
    return False


def test_every_cited_path_exists() -> None:
    missing = [
        f"{path.relative_to(ROOT)}: {cited}"
        for path in _files()
        if path.suffix in (".md", ".py") and path.is_file()
        for text in _prose(path)
        for cited in _cited(text)
        if not _exists(cited, path)
    ]
    assert missing == []

"""docs/spec.md's lint example: the spec in it gives the messages it shows, and the fixes they
carry leave it clean."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from codegen import pipeline
from codegen.diagnostics import SpecErrors
from tests.codegen.spec_edits import apply

DOCS = Path(__file__).parents[2] / "docs" / "spec.md"


def _lint_section() -> str:
    return DOCS.read_text(encoding="utf-8").split("\n## Lint\n", 1)[1].split("\n## ", 1)[0]


def test_the_lint_example_prints_what_the_docs_show() -> None:
    section = _lint_section()
    spec = re.search(r"```toml\n(.*?)```", section, re.S)
    shown = re.findall(r"```text\n(.*?)```", section, re.S)
    assert spec is not None
    assert len(shown) == 2
    with pytest.raises(SpecErrors) as caught:
        pipeline.analyse(spec.group(1), "books.toml")
    problems = caught.value.problems
    assert "".join(p.render("books.toml") + "\n" for p in problems) == shown[1]
    fixed = apply(spec.group(1), [edit for problem in problems for edit in problem.fix])
    pipeline.analyse(fixed, "books.toml")

"""The pure pipeline: spec text -> checked spec -> IR -> rendered, formatted {path: text}."""

from __future__ import annotations

from .checks import check_table, check_types
from .diagnostics import Problem, SpecErrors, locate
from .formatter import format_python
from .key_checks import check_keys
from .lint import lint
from .loader import parse_text
from .lower import lower
from .pattern_checks import check_patterns
from .render import render
from .resolve import Resolved, resolve


def analyse(text: str, source: str) -> Resolved:
    """The resolved spec, or SpecErrors with every problem, located: first the shape and
    references (lowering relies on them), then, when those hold, the key design (lint)."""
    resolved = resolve(parse_text(text), source)
    problems: list[Problem] = list(resolved.problems)
    for check in (check_table, check_types, check_keys, check_patterns):
        problems.extend(check(resolved))
    if not problems:
        problems = lint(resolved)
    if problems:
        raise SpecErrors(locate(problems, text))
    return resolved


def generate(text: str, source: str) -> dict[str, str]:
    """Every generated file, by path relative to the output directory; lints first."""
    resolved = analyse(text, source)
    return format_python(render(lower(resolved), resolved.spec.table))

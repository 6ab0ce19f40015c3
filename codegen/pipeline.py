"""The pure pipeline: spec text -> checked spec -> IR -> rendered, formatted {path: text}."""

from __future__ import annotations

from .authz import check_authorization
from .checks import check_table, check_types
from .diagnostics import Problem, SpecErrors, locate
from .formatter import format_python
from .key_checks import check_keys
from .lint import lint
from .loader import parse_text
from .lower import lower
from .pattern_checks import check_patterns
from .relation_checks import check_relations
from .render import render
from .resolve import Resolved, resolve
from .tenancy import check_global_keys
from .write_checks import check_write_rules, check_writes


def analyse(text: str, source: str) -> Resolved:
    """The resolved spec, or SpecErrors with every problem, located, all in one run: the
    shape, the references, and the key design (lint) and authorization rules of every part
    whose shape and references hold (they rely on them; the others are already reported)."""
    spec, problems = parse_text(text)
    resolved = resolve(spec, source)
    problems += resolved.problems
    checks = (check_table, check_types, check_keys, check_patterns, check_relations, check_writes)
    for check in (*checks, check_global_keys):
        problems.extend(check(resolved))
    sound = _without(resolved, problems)
    if sound is not None:
        problems += lint(sound)
        problems += check_authorization(sound)
        problems += check_write_rules(sound)
    if problems:
        raise SpecErrors(locate(sorted(set(problems), key=_order), text))
    return resolved


def _order(problem: Problem) -> tuple[int, str, str]:
    return (problem.line or 0, problem.path, problem.message)


def _without(resolved: Resolved, problems: list[Problem]) -> Resolved | None:
    """The resolved spec without the entities and patterns a problem names, nor the patterns
    reading those entities; None when a problem touches the table or a struct (every key
    depends on them)."""
    broken: dict[str, set[str]] = {"entities": set(), "patterns": set()}
    for problem in problems:
        section, _, rest = problem.path.partition(".")
        if section in broken and rest:
            broken[section].add(rest.split(".")[0])
        elif not problem.path.startswith(("entities", "patterns")):
            return None
    entities = {n: e for n, e in resolved.entities.items() if n not in broken["entities"]}
    patterns = {
        name: pattern
        for name, pattern in resolved.spec.patterns.items()
        if name not in broken["patterns"]
        and {pattern.entity or "", *pattern.returns} - {""} <= set(entities)
    }
    spec = resolved.spec.model_copy(
        update={
            "entities": {n: resolved.spec.entities[n] for n in entities},
            "patterns": patterns,
        }
    )
    return Resolved(spec, resolved.source, entities, resolved.struct_attrs)


def generate(text: str, source: str, package: str | None = None) -> dict[str, str]:
    """Every generated file, by path relative to the output directory; lints first.
    `package` is the import name of that directory, for the worksheet's imports."""
    resolved = analyse(text, source)
    return format_python(render(lower(resolved), resolved.spec.table, package))

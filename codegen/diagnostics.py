"""Problems found in a spec: the TOML path, what is wrong and how to fix it, and the line
when the source text shows where the path is written."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-.\"' ]+?)\s*=")


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    path: str
    message: str
    line: int | None = None

    def render(self, source: str) -> str:
        where = f"{source}:{self.line}" if self.line else source
        return f"{where}: {self.path or '<spec>'}: {self.message}"


class SpecErrors(Exception):
    """Raised with every problem of a spec at once."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        super().__init__(f"{len(problems)} problem(s) in the spec")
        self.problems = tuple(problems)


def _dotted(text: str) -> tuple[str, ...]:
    return tuple(part.strip().strip("\"'") for part in text.split("."))


def _index_lines(text: str) -> list[tuple[tuple[str, ...], int]]:
    """Every key path the text defines at the start of a line, with its line number."""
    found: list[tuple[tuple[str, ...], int]] = []
    table: tuple[str, ...] = ()
    for number, line in enumerate(text.splitlines(), start=1):
        header = _HEADER.match(line)
        if header:
            table = _dotted(header.group(1))
            found.append((table, number))
            continue
        key = _KEY.match(line)
        if key:
            found.append(((*table, *_dotted(key.group(1))), number))
    return found


def locate(problems: Iterable[Problem], text: str) -> list[Problem]:
    """Fill in line numbers: the line defining the longest prefix of each problem's path;
    sorted by line then path, so output is stable."""
    index = _index_lines(text)
    located: list[Problem] = []
    for problem in problems:
        path = tuple(p for p in re.split(r"\.|\[|\]", problem.path) if p)
        best, best_len = problem.line, 0
        for keys, number in index:
            if len(keys) > best_len and path[: len(keys)] == keys:
                best, best_len = number, len(keys)
        located.append(Problem(problem.path, problem.message, best))
    return sorted(set(located), key=lambda p: (p.line or 0, p.path, p.message))

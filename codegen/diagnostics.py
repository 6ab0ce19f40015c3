"""Problems found in a spec: the TOML path, what is wrong and how to fix it, the line when
the source text shows where the path is written, and the fix as spec edits when one keeps
the author's intent."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_HEADER = re.compile(r"^\s*\[\[?\s*([^\]]+?)\s*\]\]?\s*(#.*)?$")
_KEY = re.compile(r"^\s*([A-Za-z0-9_\-.\"' ]+?)\s*=")


@dataclass(frozen=True, slots=True, order=True)
class Edit:
    """One line of a fix: set `key` (dotted, relative to the TOML table `section`) to
    `value`, TOML text."""

    section: str
    key: str
    value: str

    @property
    def path(self) -> str:
        return f"{self.section}.{self.key}"


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    path: str
    message: str
    line: int | None = None
    fix: tuple[Edit, ...] = ()
    """The edits that fix the problem while keeping what the spec means, if any."""

    def render(self, source: str) -> str:
        where = f"{source}:{self.line}" if self.line else source
        text = f"{where}: {self.path or '<spec>'}: {self.message}"
        if self.fix:
            text += "\n  fix:" + "".join(f"\n    {line}" for line in snippet(self.fix))
        return text


def snippet(edits: Sequence[Edit]) -> list[str]:
    """The edits as TOML lines, each under its table's header."""
    lines: list[str] = []
    section = None
    for edit in edits:
        if edit.section != section:
            lines.append(f"[{edit.section}]")
            section = edit.section
        lines.append(f"{edit.key} = {edit.value}")
    return lines


def toml_string(text: str) -> str:
    """`text` as a TOML basic string."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


class SpecErrors(Exception):
    """Raised with every problem of a spec at once."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        super().__init__(f"{len(problems)} problem(s) in the spec")
        self.problems = tuple(problems)


def _dotted(text: str) -> tuple[str, ...]:
    return tuple(part.strip().strip("\"'") for part in text.split("."))


def index_lines(text: str) -> list[tuple[tuple[str, ...], int]]:
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


def split_path(path: str) -> tuple[str, ...]:
    """A TOML path of a problem (`patterns.x.sort`, `a[0].b`) as its keys."""
    return tuple(p for p in re.split(r"\.|\[|\]", path) if p)


def locate(problems: Iterable[Problem], text: str) -> list[Problem]:
    """Fill in line numbers: the line defining the longest prefix of each problem's path;
    sorted by line then path, so output is stable."""
    index = index_lines(text)
    located: list[Problem] = []
    for problem in problems:
        path = split_path(problem.path)
        best, best_len = problem.line, 0
        for keys, number in index:
            if len(keys) > best_len and path[: len(keys)] == keys:
                best, best_len = number, len(keys)
        located.append(Problem(problem.path, problem.message, best, problem.fix))
    return sorted(set(located), key=lambda p: (p.line or 0, p.path, p.message))

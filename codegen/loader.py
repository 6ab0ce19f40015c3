"""Reading a spec: TOML syntax, then the shape (pydantic), every problem located."""

from __future__ import annotations

import re
import tomllib
from typing import Any

import pydantic

from .diagnostics import Problem, SpecErrors, locate
from .spec import Spec

_TOML_LINE = re.compile(r"\(at line (\d+), column \d+\)")


def _path(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _message(error: Any) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        return "unknown key; remove it or fix its spelling"
    if kind == "missing":
        return "required key is missing; add it"
    if kind == "literal_error":
        return f"{error['msg'].replace('Input should be', 'must be')}, got {error['input']!r}"
    text = str(error["msg"])
    return f"{text[0].lower()}{text[1:]}, got {error['input']!r}"


def parse_text(text: str) -> Spec:
    """The spec in `text`, or SpecErrors naming every problem."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = _TOML_LINE.search(str(exc))
        line = int(match.group(1)) if match else None
        message = _TOML_LINE.sub("", str(exc)).strip()
        raise SpecErrors([Problem("", f"not valid TOML: {message}", line)]) from None
    try:
        return Spec.model_validate(data)
    except pydantic.ValidationError as exc:
        problems = []
        for error in exc.errors():
            loc = tuple(p for p in error["loc"] if not str(p).startswith("function-"))
            problems.append(Problem(_path(loc), _message(error)))
        raise SpecErrors(locate(problems, text)) from None

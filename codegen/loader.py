"""Reading a spec: TOML syntax, then the shape (pydantic), every problem located."""

from __future__ import annotations

import difflib
import re
import tomllib
import typing
from typing import Any

import pydantic

from .diagnostics import Problem, SpecErrors, locate
from .spec import AttributeSpec, Spec, StructSpec

_TOML_LINE = re.compile(r"\(at line (\d+), column \d+\)")


def _path(loc: tuple[int | str, ...]) -> str:
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


def _model_in(annotation: Any) -> type[pydantic.BaseModel] | None:
    if isinstance(annotation, type) and issubclass(annotation, pydantic.BaseModel):
        return annotation
    for arg in typing.get_args(annotation):
        if found := _model_in(arg):
            return found
    return None


def _allowed(loc: tuple[int | str, ...]) -> list[str]:
    """The keys the spec language allows where `loc`'s last key was written."""
    model: type[pydantic.BaseModel] | None = Spec
    parts = list(loc[:-1])
    while parts and model is not None:
        field = model.model_fields.get(str(parts.pop(0)))
        if field is None:  # a struct's fields are its extra keys
            model = AttributeSpec if model is StructSpec else None
            continue
        if typing.get_origin(field.annotation) is dict and parts:
            parts.pop(0)
        model = _model_in(field.annotation)
    return sorted(model.model_fields) if model is not None else []


def _message(error: Any) -> str:
    kind = error["type"]
    if kind == "extra_forbidden":
        allowed = _allowed(error["loc"])
        close = difflib.get_close_matches(str(error["loc"][-1]), allowed, n=1)
        hint = f"did you mean `{close[0]}`? " if close else ""
        known = f" (allowed here: {', '.join(allowed)})" if allowed else ""
        return f"unknown key; {hint}remove it or fix its spelling{known}"
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

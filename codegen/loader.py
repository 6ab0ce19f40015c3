"""Reading a spec: TOML syntax, then the shape (pydantic), every problem located."""

from __future__ import annotations

import difflib
import re
import tomllib
import typing
from typing import Any

import pydantic

from .diagnostics import Edit, Problem, SpecErrors, locate, toml_string
from .pytypes import snake
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


def _fix(error: Any, data: dict[str, Any]) -> tuple[Edit, ...]:
    """The value of a missing key when the spec says what it must be: an entity's type
    (its name in capitals), a pattern's operation (a query when it has a partition, a get
    when it names an entity)."""
    loc = error["loc"]
    if error["type"] != "missing" or len(loc) != 3:
        return ()
    section, name, key = (str(part) for part in loc)
    written = data.get(section, {}).get(name)
    if not isinstance(written, dict):
        return ()
    if (section, key) == ("entities", "type"):
        value = re.sub(r"[^A-Z0-9_]", "", snake(name).upper())
        return (Edit(f"{section}.{name}", key, toml_string(value)),) if value[:1].isalpha() else ()
    if (section, key) == ("patterns", "operation"):
        operation = "query" if "partition" in written else "get" if "entity" in written else None
        return (Edit(f"{section}.{name}", key, toml_string(operation)),) if operation else ()
    return ()


_SECTIONS = ("entities", "patterns", "structs")
"""Parts of a spec that can be left out when their shape is wrong, so the rest is checked."""


def _drop(data: dict[str, Any], loc: tuple[int | str, ...]) -> bool:
    """Remove the part of the spec holding the error at `loc`; False when it is essential."""
    if len(loc) >= 2 and loc[0] in _SECTIONS and isinstance(data.get(str(loc[0])), dict):
        return data[str(loc[0])].pop(str(loc[1]), None) is not None
    if len(loc) >= 3 and loc[:2] == ("table", "indexes"):
        indexes = data.get("table", {}).get("indexes", {})
        return isinstance(indexes, dict) and indexes.pop(str(loc[2]), None) is not None
    return False


def _drop_dependents(data: dict[str, Any], dropped: set[str]) -> None:
    """Leave out, silently, what refers to a dropped entity: its problems are reported."""
    entities, patterns = data.get("entities", {}), data.get("patterns", {})
    for name, entity in list(entities.items()):
        if isinstance(entity, dict) and entity.get("attributes_from") in dropped:
            del entities[name]
    for name, pattern in list(patterns.items()):
        if isinstance(pattern, dict) and (
            pattern.get("entity") in dropped or set(pattern.get("returns") or ()) & dropped
        ):
            del patterns[name]


def parse_text(text: str) -> tuple[Spec, list[Problem]]:
    """The spec in `text` and the problems of its shape: a part whose shape is wrong (an
    entity, a pattern, a struct, an index) is reported and left out, so the rest can still
    be checked. SpecErrors when the TOML does not parse or an essential part is wrong."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        match = _TOML_LINE.search(str(exc))
        line = int(match.group(1)) if match else None
        message = _TOML_LINE.sub("", str(exc)).strip()
        raise SpecErrors([Problem("", f"not valid TOML: {message}", line)]) from None
    problems: list[Problem] = []
    dropped: set[str] = set()
    while True:
        try:
            spec = Spec.model_validate(data)
        except pydantic.ValidationError as exc:
            essential = False
            for error in exc.errors():
                loc = tuple(p for p in error["loc"] if not str(p).startswith("function-"))
                problems.append(Problem(_path(loc), _message(error), fix=_fix(error, data)))
                if loc[:1] == ("entities",) and len(loc) >= 2:
                    dropped.add(str(loc[1]))
                if not _drop(data, loc):
                    essential = True
            if essential:
                raise SpecErrors(locate(problems, text)) from None
            _drop_dependents(data, dropped)
            continue
        return spec, locate(problems, text)

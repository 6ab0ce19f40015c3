"""Key templates: literal segments and {placeholder} segments joined by "#".

Each segment is either literal text or exactly one placeholder. A condition template (the
value of a sort condition) may end with "#": it then ends at a delimiter.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DELIMITER = "#"
_LITERAL = re.compile(r"^[A-Za-z0-9_.:\-]+$")
_PLACEHOLDER = re.compile(r"^\{([a-z_][a-z0-9_]*)\}$")


class TemplateError(ValueError):
    """A template that does not parse; the message says what to change, and `fixed` is the
    template as it was likely meant, when that is clear."""

    def __init__(self, message: str, fixed: str | None = None) -> None:
        super().__init__(message)
        self.fixed = fixed


_MIXED = re.compile(r"^([A-Za-z0-9_.:\-]*)(\{[a-z_][a-z0-9_]*\})([A-Za-z0-9_.:\-]*)$")
"""A segment of text and one placeholder without '#' between them: USER{user_id}."""


def _split_mixed(source: str) -> str | None:
    """The template with each text-and-placeholder segment split at '#', if that parses."""
    parts: list[str] = []
    for raw in source.split(DELIMITER):
        match = _MIXED.match(raw)
        parts.extend([p for p in match.groups() if p] if match else [raw])
    fixed = DELIMITER.join(parts)
    if fixed == source:
        return None
    try:
        parse(fixed, condition=True)
    except TemplateError:
        return None
    return fixed


@dataclass(frozen=True, slots=True)
class Segment:
    literal: str | None = None
    placeholder: str | None = None

    @property
    def text(self) -> str:
        return self.literal if self.literal is not None else "{" + str(self.placeholder) + "}"


@dataclass(frozen=True, slots=True)
class Template:
    source: str
    segments: tuple[Segment, ...]
    trailing_delimiter: bool = False

    @property
    def placeholders(self) -> tuple[str, ...]:
        names = (s.placeholder for s in self.segments if s.placeholder is not None)
        return tuple(dict.fromkeys(names))


def parse(source: str, *, condition: bool = False) -> Template:
    """Parse a key template; `condition` allows a final "#" (a prefix ending at a delimiter)."""
    trailing = False
    body = source
    if condition and body.endswith(DELIMITER) and len(body) > 1:
        body, trailing = body[:-1], True
    if not body:
        raise TemplateError("a key template must not be empty")
    segments: list[Segment] = []
    for raw in body.split(DELIMITER):
        if not raw:
            fixed = DELIMITER.join(p for p in body.split(DELIMITER) if p)
            raise TemplateError(
                f"{source!r} has an empty segment; write segments joined by a single '#'",
                (fixed + DELIMITER if trailing else fixed) or None,
            )
        match = _PLACEHOLDER.match(raw)
        if match:
            segments.append(Segment(placeholder=match.group(1)))
        elif _LITERAL.match(raw):
            segments.append(Segment(literal=raw))
        elif "{" in raw or "}" in raw:
            raise TemplateError(
                f"segment {raw!r} of {source!r} mixes text and a placeholder or is not a "
                "snake_case {name}; put each placeholder in its own segment between '#'",
                _split_mixed(source),
            )
        else:
            raise TemplateError(
                f"literal {raw!r} of {source!r} may only hold letters, digits and _ . : -"
            )
    return Template(source, tuple(segments), trailing)

"""The GraphQL names and value types that reads and writes share (api.graphql): camelCase
fields and arguments, an attribute's or key argument's type, a pattern's root field."""

from __future__ import annotations

from .ir_api import ArgBindingIR
from .pytypes import KeyVar
from .resolve import Attr, Resolved
from .spec import DEFAULT_PAGE_SIZE, PatternSpec

INT_MAX = 2**31 - 1
"""GraphQL's Int is 32 bits: a number that may pass it is a Long."""


def described(text: str) -> str:
    """A description as SDL prints it: a block string on one line ("" for none)."""
    flat = " ".join(text.split()).replace('"""', '\\"""')
    if flat.endswith('"'):
        flat += " "
    return f'"""{flat}"""' if flat else ""


def first_argument(pattern: PatternSpec) -> str:
    """A query field's `first`, its default the pattern's page size, as introspection shows."""
    return f"first: Int = {(pattern.page_size or DEFAULT_PAGE_SIZE).default}"


def field_name(name: str) -> str:
    """A spec name as a GraphQL field or argument: user_id -> userId."""
    words = name.split("_")
    return words[0] + "".join(word[:1].upper() + word[1:] for word in words[1:])


def root_field(resolved: Resolved, pattern: str) -> str | None:
    """The root Query field a pattern answers: its `field`, else its name in camelCase;
    None for a pattern whose `field` is false."""
    field = resolved.spec.patterns[pattern].field
    if field is False:
        return None
    return field or field_name(pattern)


def shown(attr: Attr) -> bool:
    """Whether its type shows a field of the attribute."""
    return attr.spec.field is not False


def _int(low: float | None, high: float | None, width: int | None) -> str:
    if width is not None:
        return "Int" if width <= 9 else "Long"
    fits = low is not None and high is not None and low >= -INT_MAX - 1 and high <= INT_MAX
    return "Int" if fits else "Long"


_PLAIN = {"id": "ID", "string": "String", "float": "Float", "bool": "Boolean"}
_PLAIN |= {"datetime": "DateTime", "date": "Date", "path": "[String!]"}


def attribute_type(attr: Attr) -> str:
    """The GraphQL type of an attribute, non-null unless it is optional."""
    spec = attr.spec
    kind = spec.type
    if kind == "enum":
        named = str(attr.enum_class)
    elif kind == "int":
        named = _int(spec.ge, spec.le, spec.width)
    elif kind == "struct":
        named = str(spec.of)
    elif kind == "list":
        of = str(spec.of)
        item = "Long" if of == "int" else _PLAIN.get(of, of)
        named = f"[{item}!]"
    else:
        named = _PLAIN[kind]
    return named if spec.optional else named + "!"


def argument_type(var: KeyVar) -> str:
    """The GraphQL type of a key argument (always given)."""
    if var.type == "enum":
        return f"{var.enum_class}!"
    if var.type == "int":
        return _int(None, None, var.width) + "!"
    return _PLAIN.get(var.type, "String").removesuffix("!") + "!"


def arg_binding(var: KeyVar, name: str | None = None, *, in_id: bool = False) -> ArgBindingIR:
    """A key argument as api.py binds it: its field name, parameter and GraphQL type, and
    for a part of a global id (`in_id`) a path's separator there."""
    kind = "Path" if var.type == "path" else argument_type(var).rstrip("!")
    separator = (var.separator or "") if in_id else ""
    return ArgBindingIR(name or field_name(var.name), var.param, kind, separator)

"""How spec types become Python: names, annotations, and the expressions that store, load,
render into keys and parse out of keys. Everything here returns source text for templates."""

from __future__ import annotations

import keyword
import re
from dataclasses import dataclass, field

from .spec import AttributeSpec

ID_MAX_LENGTH = 128
"""The most characters of an id (the Id type of the generated models)."""
_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def snake(name: str) -> str:
    """OrderLine -> order_line, GSI1 -> gsi1."""
    return _CAMEL_BOUNDARY.sub("_", name).lower()


def camel(name: str) -> str:
    """order_line -> OrderLine; already CamelCase names are kept."""
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def py_name(name: str) -> str:
    """A spec name usable as a Python identifier: keywords get a trailing underscore."""
    return name + "_" if keyword.iskeyword(name) or keyword.issoftkeyword(name) else name


def docstring(text: str) -> str:
    """Text safe inside a triple-quoted docstring on one line."""
    return " ".join(text.split()).replace("\\", "\\\\").replace('"', '\\"')


def member_name(value: str) -> str:
    name = re.sub(r"\W", "_", value).upper()
    if not name or name[0].isdigit():
        name = "V_" + name
    return py_name(name)


@dataclass(frozen=True, slots=True)
class KeyVar:
    """A placeholder's value as a key builder sees it."""

    name: str
    type: str
    width: int | None = None
    enum_class: str | None = None
    values: tuple[str, ...] = ()
    separator: str | None = field(default=None, compare=False)
    """A path attribute's id_separator: what joins its parts in a global id."""

    @property
    def param(self) -> str:
        return py_name(self.name)

    @property
    def annotation(self) -> str:
        return {
            "int": "int",
            "datetime": "datetime",
            "date": "date",
            "path": "Sequence[str]",
            "enum": str(self.enum_class),
        }.get(self.type, "str")

    @property
    def part_annotation(self) -> str:
        return "tuple[str, ...]" if self.type == "path" else self.annotation

    def render(self, value: str) -> str:
        if self.type == "datetime":
            return f"_kc.format_datetime({value})"
        if self.type == "date":
            return f"_kc.format_date({value})"
        if self.type == "int":
            return f"_kc.format_int({value}, {self.width})"
        if self.type == "path":
            return f"_kc.escape_path({value})"
        return f"_kc.escape({value})"

    def parse(self, segment: str) -> str:
        if self.type == "datetime":
            return f"_kc.parse_datetime({segment})"
        if self.type == "date":
            return f"_kc.parse_date({segment})"
        if self.type == "int":
            return f"int({segment})"
        if self.type == "path":
            return f"_kc.unescape_path({segment})"
        if self.type == "enum":
            return f"{self.enum_class}(_kc.unescape({segment}))"
        return f"_kc.unescape({segment})"


def field_annotation(attr: AttributeSpec, enum_class: str | None) -> str:
    """The model field's annotation (without the optional part)."""
    t = attr.type
    if t == "id":
        bounds = [
            f"{name}={getattr(attr, name)!r}"
            for name in ("max_length", "pattern")
            if getattr(attr, name) is not None
        ]
        return f"Annotated[Id, Field({', '.join(bounds)})]" if bounds else "Id"
    if t == "datetime":
        return "UtcDatetime"
    if t == "date":
        return "date"
    if t == "struct":
        return str(attr.of)
    if t == "path":
        return _path_annotation(attr)
    if t == "bool":
        return "bool"
    if t == "enum":
        return str(enum_class)
    constraints: list[str] = []
    scalar_item = {"id": "Id", "string": "str"}.get(str(attr.of))
    base = {"string": "str", "int": "int", "float": "float"}.get(
        t, f"list[{scalar_item or attr.of}]"
    )
    for name in ("min_length", "max_length", "pattern", "ge", "le"):
        value = getattr(attr, name)
        if value is not None:
            constraints.append(f"{name}={value!r}")
    if attr.min_items is not None:
        constraints.append(f"min_length={attr.min_items}")
    if attr.max_items is not None:
        constraints.append(f"max_length={attr.max_items}")
    if t == "float":
        constraints.append("allow_inf_nan=False")
    if not constraints:
        return base
    return f"Annotated[{base}, Field({', '.join(constraints)})]"


def _path_annotation(attr: AttributeSpec) -> str:
    """PathParts, or the same with the attribute's bounds: max_items parts, each of at most
    max_length characters matching pattern."""
    part = [
        f"{name}={getattr(attr, name)!r}"
        for name in ("max_length", "pattern")
        if getattr(attr, name) is not None
    ]
    if not part and attr.max_items is None:
        return "PathParts"
    whole = "min_length=1" + (f", max_length={attr.max_items}" if attr.max_items else "")
    part_field = ", ".join(["min_length=1", *part])
    return f"Annotated[tuple[Annotated[str, Field({part_field})], ...], Field({whole})]"


def store_expr(attr: AttributeSpec, value: str) -> str:
    """Expression turning a model value into its stored item value."""
    if attr.type == "list" and attr.of in ("id", "string"):
        return f"list({value})"
    return {
        "float": f"Decimal(repr({value}))",
        "datetime": f"_kc.format_datetime({value})",
        "date": f"_kc.format_date({value})",
        "enum": f"{value}.value",
        "path": f"list({value})",
        "list": f"[entry.to_item() for entry in {value}]",
        "struct": f"{value}.to_item()",
    }.get(attr.type, value)


def load_expr(attr: AttributeSpec, raw: str, enum_class: str | None) -> str:
    """Expression turning a stored item value back into a model value."""
    return {
        "int": f"int({raw})",
        "float": f"float({raw})",
        "datetime": f"_kc.parse_datetime({raw})",
        "date": f"_kc.parse_date({raw})",
        "enum": f"{enum_class}({raw})",
        "path": f"tuple({raw})",
    }.get(attr.type, raw)  # structs and lists of them are validated by their models

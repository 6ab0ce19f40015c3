"""Cross-reference checks: names, references between entities, structs, indexes and
patterns, and which keys each attribute type allows. Lowering relies on these holding."""

from __future__ import annotations

import difflib
import keyword
import re
from collections.abc import Iterator

from pydantic import BaseModel

from . import fixes
from .diagnostics import Problem
from .pytypes import camel, snake
from .resolve import Attr, Resolved
from .spec import AttributeSpec

SNAKE = re.compile(r"^[a-z][a-z0-9_]*$")
CAMEL = re.compile(r"^[A-Z][A-Za-z0-9]*$")
KEY_ATTR = re.compile(r"^[A-Za-z][A-Za-z0-9_]*$")
RESERVED = frozenset(
    {
        "s", "first", "after", "limit", "start", "consistent", "refs", "size", "args", "items",
        "item", "cursor", "found", "plans", "kind", "entry", "partition", "key", "parts", "exc",
        "count", "index",
    }
)  # fmt: skip
"""Names generated functions use for their own parameters and locals: not for placeholders."""
MODEL_NAMES = frozenset({"to_item", "from_item", *dir(BaseModel)})
RESERVED_MODULES = frozenset({"enums"})
_TYPE_KEYS = {
    "string": {"min_length", "max_length", "pattern"},
    "int": {"ge", "le", "width"},
    "float": {"ge", "le"},
    "enum": {"values"},
    "list": {"of", "min_items", "max_items"},
    "path": {"max_items", "max_length", "pattern", "id_separator"},
    "id": {"max_length", "pattern"},
    "struct": {"of"},
}
_COMMON_KEYS = {"type", "description", "optional", "default", "generated", "field"}
_GENERATED = {"id": ("id", "string"), "now": ("datetime",)}
"""The types each generated value fits."""
SCALAR_LISTS = frozenset({"id", "string"})
"""What a list holds besides structs: ids or strings, stored as a list of strings."""
_DEFAULTS = {"string": str, "id": str, "int": int, "bool": bool, "enum": str}


def _attribute(path: str, attr: AttributeSpec, structs: set[str]) -> Iterator[Problem]:
    allowed = _COMMON_KEYS | _TYPE_KEYS.get(attr.type, set())
    stray = sorted(attr.model_fields_set - allowed)
    for name in stray:
        yield Problem(
            f"{path}.{name}",
            f"`{name}` does not apply to type {attr.type}; remove it (it applies to "
            + ", ".join(t for t, keys in _TYPE_KEYS.items() if name in keys)
            + ")",
            fix=(fixes.attribute_at(path, attr, **dict.fromkeys(stray)),),
        )
    if attr.default is not None:
        kind = _DEFAULTS.get(attr.type)
        if kind is None or type(attr.default) is not kind:
            yield Problem(
                f"{path}.default",
                f"a default must be a {kind.__name__ if kind else 'value'} of the attribute's "
                "type; defaults apply to id, string, int, bool and enum attributes",
            )
        elif attr.optional:
            yield Problem(f"{path}.default", "an optional attribute has no default; drop one")
        elif attr.type == "enum" and attr.default not in (attr.values or ()):
            yield Problem(f"{path}.default", f"{attr.default!r} is not one of the values")
    if attr.generated is not None:
        fits = _GENERATED[attr.generated]
        if attr.type not in fits:
            yield Problem(
                f"{path}.generated",
                f'generated = "{attr.generated}" fills {" or ".join(fits)} attributes, '
                f"not {attr.type}",
            )
        elif attr.optional or attr.default is not None:
            yield Problem(
                f"{path}.generated",
                "a generated attribute always has its value: drop optional and default",
            )
    if attr.type == "enum":
        values = attr.values or ()
        if not values or len(set(values)) != len(values):
            yield Problem(f"{path}.values", "an enum needs a non-empty list of distinct values")
        for value in values:
            if not re.match(r"^[A-Za-z][A-Za-z0-9_]*$", value):
                yield Problem(f"{path}.values", f"enum value {value!r} must be an identifier")
    if attr.type == "struct" and attr.of not in structs:
        close = difflib.get_close_matches(str(attr.of), sorted(structs), n=1)
        yield Problem(
            f"{path}.of",
            f"{attr.of!r} is not a struct; "
            + (f"did you mean {close[0]!r}?" if close else f"declare [structs.{attr.of}]"),
            fix=(fixes.attribute_at(path, attr, of=close[0]),) if close else (),
        )
    if attr.type == "list" and attr.of not in structs and attr.of not in SCALAR_LISTS:
        yield Problem(
            f"{path}.of",
            f"{attr.of!r} is not a struct: a list holds structs, ids or strings (a list of "
            "numbers can be a struct of one int field)",
        )
    if attr.id_separator is not None and not _separator(attr.id_separator):
        yield Problem(
            f"{path}.id_separator",
            f"{attr.id_separator!r} cannot join a path's parts in a global id: give one "
            'printable ASCII character that is no letter, digit, space or "[" (".", "/")',
        )
    if attr.pattern is not None:
        try:
            re.compile(attr.pattern)
        except re.error as exc:
            yield Problem(f"{path}.pattern", f"not a valid regular expression: {exc}")
    for low, high in (("min_length", "max_length"), ("ge", "le"), ("min_items", "max_items")):
        lo, hi = getattr(attr, low), getattr(attr, high)
        if lo is not None and hi is not None and lo > hi:
            yield Problem(f"{path}.{low}", f"{low} {lo} is above {high} {hi}")
    if attr.type == "int" and any(
        isinstance(v, float) and not v.is_integer() for v in (attr.ge, attr.le) if v is not None
    ):
        yield Problem(path, "ge and le of an int must be whole numbers")


def _separator(text: str) -> bool:
    """Whether `text` can join a path's parts in a global id: one character that a part
    written in ids (ids, names) rarely holds and a JSON list does not start with."""
    return (
        len(text) == 1
        and text.isascii()
        and text.isprintable()
        and not text.isalnum()
        and text not in "[ "
    )


def _attribute_name(name: str) -> str | None:
    """Why `name` cannot name an attribute, and what to call it instead; None if it can."""
    if not SNAKE.match(name):
        fixed = snake(name)
        rename = f"rename it {fixed}" if SNAKE.match(fixed) else "rename it"
        return f"attribute names are snake_case: {rename}"
    if keyword.iskeyword(name):
        return (
            f"{name} is a Python keyword, which a model field cannot be: give it a name that "
            f"says more ({name}_date, {name}_id)"
        )
    if name.startswith("model_"):
        return f"pydantic reserves names starting model_ for itself: rename it {name[6:]}"
    if name in MODEL_NAMES:
        return (
            f"{name} is a method of every generated model (pydantic's, or to_item / "
            f"from_item): give it a name that says more ({name}_of, {name}_text)"
        )
    return None


def _names(path: str, attrs: dict[str, Attr]) -> Iterator[Problem]:
    for name in attrs:
        why = _attribute_name(name)
        if why is not None:
            yield Problem(f"{path}.{name}", why)


def check_table(resolved: Resolved) -> Iterator[Problem]:
    table = resolved.spec.table
    seen = [table.partition_key, table.sort_key]
    for name, index in table.indexes.items():
        path = f"table.indexes.{name}"
        if not KEY_ATTR.match(name) or name == "table":
            yield Problem(path, "index names must be identifiers (letters, digits, _), not 'table'")
        seen += [index.partition_key, *([index.sort_key] if index.sort_key else [])]
        if index.include and index.projection != "INCLUDE":
            yield Problem(f"{path}.include", "include applies only to projection = 'INCLUDE'")
    for attr in seen:
        if not KEY_ATTR.match(attr):
            yield Problem("table", f"key attribute {attr!r} must be an identifier")
    if len({a.lower() for a in seen}) != len(seen):
        yield Problem(
            "table", "every key attribute of the table and its indexes must differ (ignoring case)"
        )
    builders = [snake(name) for name in table.indexes]
    if len(set(builders)) != len(builders):
        yield Problem("table.indexes", "index names must differ once snake_cased (GSI1 vs gsi1)")


def check_types(resolved: Resolved) -> Iterator[Problem]:
    spec = resolved.spec
    structs = set(spec.structs)
    modules: dict[str, str] = {}
    for kind, names in (("structs", spec.structs), ("entities", spec.entities)):
        for name in names:
            module = snake(name)
            if not CAMEL.match(name) or module in RESERVED_MODULES or module in modules:
                fixed = camel(name)
                rename = f"rename it {fixed}" if CAMEL.match(fixed) and fixed != name else ""
                yield Problem(
                    f"{kind}.{name}",
                    "names must be CamelCase and distinct once snake_cased (not Enums); "
                    + (
                        f"clashes with {modules[module]}"
                        if module in modules
                        else rename or "rename it"
                    ),
                )
            modules.setdefault(module, name)
    for name, struct in spec.structs.items():
        yield from _names(f"structs.{name}", resolved.struct_attrs[name])
        for field, attr in struct.fields.items():
            yield from _attribute(f"structs.{name}.{field}", attr, structs - {name})
    types: dict[str, str] = {}
    ttl = spec.table.ttl_attribute
    for name, entity in spec.entities.items():
        own = {n: resolved.entities[name].attrs[n] for n in entity.attributes}
        yield from _names(f"entities.{name}.attributes", own)
        for field, attr in entity.attributes.items():
            yield from _attribute(f"entities.{name}.attributes.{field}", attr, structs)
        if entity.type in types:
            yield Problem(
                f"entities.{name}.type", f"type {entity.type!r} is also {types[entity.type]}'s"
            )
        types.setdefault(entity.type, name)
        ttl_attr = resolved.entities[name].attrs.get(ttl or "")
        if ttl_attr is not None and ttl_attr.spec.type != "int":
            path = f"entities.{name}.attributes.{ttl}"
            yield Problem(
                path,
                "the TTL attribute must be an int (epoch seconds)",
                fix=(fixes.attribute_at(path, ttl_attr.spec, type="int"),),
            )

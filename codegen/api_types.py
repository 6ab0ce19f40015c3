"""The GraphQL types an entity's attributes and relations give (api.graphql): its object
type with camelCase fields, the enums and structs they name, and the names and types that
reads and writes share."""

from __future__ import annotations

from dataclasses import dataclass

from .ir_api import ArgBindingIR, GqlFieldIR, GqlTypeIR
from .lower_queries import returned_classes
from .pytypes import KeyVar, camel, member_name
from .relations import Relation, refusable, relations_of
from .resolve import Attr, Resolved
from .rules import Rule

INT_MAX = 2**31 - 1
"""GraphQL's Int is 32 bits: a number that may pass it is a Long."""


def described(text: str) -> str:
    """A description as SDL prints it: a block string on one line ("" for none)."""
    flat = " ".join(text.split()).replace('"""', '\\"""')
    if flat.endswith('"'):
        flat += " "
    return f'"""{flat}"""' if flat else ""


def field_name(name: str) -> str:
    """A spec name as a GraphQL field or argument: user_id -> userId."""
    words = name.split("_")
    return words[0] + "".join(word[:1].upper() + word[1:] for word in words[1:])


def root_field(resolved: Resolved, pattern: str) -> str:
    """The root Query field a pattern answers: its `field`, else its name in camelCase."""
    return resolved.spec.patterns[pattern].field or field_name(pattern)


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


def arg_binding(var: KeyVar, name: str | None = None) -> ArgBindingIR:
    """A key argument as api.py binds it: its field name, parameter and GraphQL type."""
    kind = "Path" if var.type == "path" else argument_type(var).rstrip("!")
    return ArgBindingIR(name or field_name(var.name), var.param, kind)


@dataclass
class Collected:
    """The types and root fields found so far, by name."""

    types: dict[str, GqlTypeIR]
    roots: list[GqlFieldIR]
    guarded: frozenset[tuple[str, str]]
    """(entity, attribute) of each attribute with a read rule of its own."""
    rules: dict[str, Rule]
    """Each pattern's rule (none without authorization)."""


def connection_item(resolved: Resolved, name: str) -> str:
    """What a query's connection holds: its one class, or the union of its classes."""
    classes = returned_classes(resolved.spec.patterns[name], resolved)
    return classes[0] if len(classes) == 1 else camel(name) + "Item"


def relation_field(found: Collected, resolved: Resolved, relation: Relation) -> GqlFieldIR:
    """A relation's field: what its pattern answers, nullable where its rule may refuse
    the caller or a parent may lack a bound attribute."""
    pattern = resolved.spec.patterns[relation.pattern]
    guarded = refusable(found.rules.get(relation.pattern))
    nullable = guarded or relation.optional
    args = ""
    if relation.operation == "get":
        kind, nullable = str(pattern.entity), True
    elif relation.operation == "batch_get":
        kind = f"[{pattern.entity}!]"
    else:
        kind = f"{connection_item(resolved, relation.pattern)}Connection"
        free = [f"{field_name(p.name)}: {argument_type(p)}" for p in relation.free]
        args = ", ".join([*free, "first: Int", "after: String"])
    text = relation.description
    if guarded:
        stop = "" if not text or text.endswith((".", "!", "?")) else "."
        text = f"{text}{stop} Null with FORBIDDEN for a caller its pattern's rule refuses."
    return GqlFieldIR(field_name(relation.name), kind if nullable else kind + "!", text, args)


def object_type(
    found: Collected,
    resolved: Resolved,
    name: str,
    node: bool,
    attrs: dict[str, Attr] | None = None,
    about: str | None = None,
    owner: str | None = None,
) -> None:
    """Declares an entity's (or a summary's, of `owner`) object type with what its
    attributes name; an attribute with a read rule of its own is nullable."""
    if name in found.types:
        return
    entity = resolved.entities.get(name)
    owner = owner or name
    own = attrs if attrs is not None else (entity.attrs if entity else {})
    description = about if about is not None else (entity.spec.description if entity else "")
    node = node and "id" not in own
    fields = [GqlFieldIR("id", "ID!", "Its global id.")] if node else []
    for attr in own.values():
        field = attribute_field(attr)
        if (owner, attr.name) in found.guarded:
            refused = "Null with FORBIDDEN for a caller who may not read it."
            text = f"{field.description} {refused}".strip()
            field = GqlFieldIR(field.name, field.type.removesuffix("!"), text)
        fields.append(field)
        referenced(found, resolved, attr)
    if entity is not None:
        fields += [relation_field(found, resolved, r) for r in relations_of(resolved, name)]
    found.types[name] = GqlTypeIR(
        "type", name, description, "Node" if node else "", fields=tuple(fields)
    )


def attribute_field(attr: Attr) -> GqlFieldIR:
    return GqlFieldIR(field_name(attr.name), attribute_type(attr), attr.spec.description)


def referenced(found: Collected, resolved: Resolved, attr: Attr) -> None:
    """Declares the enum or struct an attribute's type names."""
    spec = attr.spec
    if attr.enum_class and attr.enum_class not in found.types:
        values = tuple(member_name(value) for value in spec.values or ())
        description = spec.description or f"Values of {attr.name}."
        found.types[attr.enum_class] = GqlTypeIR(
            "enum", attr.enum_class, description, values=values
        )
    struct = spec.of if spec.type in ("struct", "list") else None
    if struct is None or struct not in resolved.struct_attrs or struct in found.types:
        return
    inner = resolved.struct_attrs[struct].values()
    fields = tuple(
        GqlFieldIR(field_name(a.name), attribute_type(a), a.spec.description) for a in inner
    )
    found.types[struct] = GqlTypeIR(
        "type", struct, resolved.spec.structs[struct].description, fields=fields
    )
    for attr_of_struct in inner:
        referenced(found, resolved, attr_of_struct)

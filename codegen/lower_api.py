"""Lowering of the spec to the GraphQL API its defaults give (api.graphql): every entity a
pattern returns is an object type of its name with its attributes as camelCase fields, and
every pattern a root Query field named by its camelCase name with its key arguments (never
the tenant): a get answers the object or null, a batch get a list in the order asked, a
query a Relay connection (of a union when it returns several entities). An entity with a
get pattern implements Node: its global id names its type and key values, and `node`
refetches it."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

from .field_guards import field_guards
from .ir_api import ApiIR, GqlFieldIR, GqlTypeIR
from .lower_queries import returned_classes
from .pattern_params import key_params, query_params
from .pytypes import KeyVar, camel, member_name
from .relations import Relation, pattern_rules, refusable, relations_of
from .resolve import Attr, Entity, Resolved
from .rules import Rule
from .summaries import Summary, summary_of

INT_MAX = 2**31 - 1
"""GraphQL's Int is 32 bits: a number that may pass it is a Long."""
SCALARS = {
    "DateTime": "An instant in ISO 8601 with its zone offset.",
    "Date": "A calendar date in ISO 8601 (YYYY-MM-DD).",
    "Long": "An integer beyond GraphQL's 32-bit Int, as a JSON number.",
}
PAGE_INFO = GqlTypeIR(
    "type",
    "PageInfo",
    "Where a page starts and ends, and whether another follows.",
    fields=(
        GqlFieldIR("hasNextPage", "Boolean!", ""),
        GqlFieldIR("hasPreviousPage", "Boolean!", "Always false: pages go forward."),
        GqlFieldIR("startCursor", "String", "The first edge's cursor; null on an empty page."),
        GqlFieldIR("endCursor", "String", "Continues after this page."),
    ),
)
NODE = GqlTypeIR(
    "interface",
    "Node",
    "An object with a global id, which `node` refetches.",
    fields=(GqlFieldIR("id", "ID!", "Its global id."),),
)


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


@dataclass
class _Collected:
    """The types and root fields found so far, by name."""

    types: dict[str, GqlTypeIR]
    roots: list[GqlFieldIR]
    guarded: frozenset[tuple[str, str]]
    """(entity, attribute) of each attribute with a read rule of its own."""
    rules: dict[str, Rule]
    """Each pattern's rule (none without authorization)."""


def lower_api(resolved: Resolved) -> ApiIR:
    found = _Collected({}, [], frozenset(field_guards(resolved)), pattern_rules(resolved))
    refetchable = {
        str(pattern.entity)
        for pattern in resolved.spec.patterns.values()
        if pattern.operation == "get"
    }
    for name, pattern in sorted(resolved.spec.patterns.items()):
        if pattern.operation == "query":
            found.roots.append(_query_root(found, resolved, name, refetchable))
            continue
        entity = str(pattern.entity)
        _object(found, resolved, entity, entity in refetchable)
        params = key_params(resolved, entity)
        field, description = field_name(name), pattern.description
        if pattern.operation == "get":
            args = ", ".join(f"{field_name(p.name)}: {argument_type(p)}" for p in params)
            found.roots.append(GqlFieldIR(field, entity, description, args))
        else:
            found.roots.append(_batch_root(found, field, description, entity, params))
    return _program(found)


def _query_root(
    found: _Collected, resolved: Resolved, name: str, refetchable: set[str]
) -> GqlFieldIR:
    """A query pattern's root field, declaring what its connection holds."""
    pattern = resolved.spec.patterns[name]
    field = field_name(name)
    classes = returned_classes(pattern, resolved)
    for entity_name, class_name in zip(pattern.returns, classes, strict=True):
        entity = resolved.entities[entity_name]
        summary = summary_of(resolved, entity, pattern.index)
        attrs = entity.attrs if summary is None else _summary_attrs(summary, entity)
        node = summary is None and entity_name in refetchable
        about = None if summary is None else f"What {pattern.index} holds of {entity_name}."
        _object(found, resolved, class_name, node, attrs, about, entity_name)
    item = connection_item(resolved, name)
    if len(classes) > 1:
        found.types[item] = GqlTypeIR("union", item, f"What {field} returns.", members=classes)
    _connection(found, item)
    args = [f"{field_name(p.name)}: {argument_type(p)}" for p in query_params(resolved, name)]
    args += ["first: Int", "after: String"]
    return GqlFieldIR(field, f"{item}Connection!", pattern.description, ", ".join(args))


def connection_item(resolved: Resolved, name: str) -> str:
    """What a query's connection holds: its one class, or the union of its classes."""
    classes = returned_classes(resolved.spec.patterns[name], resolved)
    return classes[0] if len(classes) == 1 else camel(name) + "Item"


def _relation_field(found: _Collected, resolved: Resolved, relation: Relation) -> GqlFieldIR:
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


def _batch_root(
    found: _Collected, field: str, description: str, entity: str, params: list[KeyVar]
) -> GqlFieldIR:
    """A batch get's root field: a list of ids, or of key inputs for a compound key."""
    if len(params) == 1:
        (param,) = params
        args = f"{field_name(param.name)}s: [{argument_type(param)}]!"
    else:
        key = f"{entity}Key"
        fields = tuple(GqlFieldIR(field_name(p.name), argument_type(p), "") for p in params)
        found.types[key] = GqlTypeIR("input", key, f"The key of one {entity}.", fields=fields)
        args = f"keys: [{key}!]!"
    return GqlFieldIR(field, f"[{entity}]!", description, args)


def _summary_attrs(summary: Summary, entity: Entity) -> dict[str, Attr]:
    """The attributes a summary holds: those in its keys, then the included ones."""
    held = set(summary.from_keys) | set(summary.included)
    return {name: attr for name, attr in entity.attrs.items() if name in held}


def _object(
    found: _Collected,
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
        field = _attribute_field(attr)
        if (owner, attr.name) in found.guarded:
            refused = "Null with FORBIDDEN for a caller who may not read it."
            text = f"{field.description} {refused}".strip()
            field = GqlFieldIR(field.name, field.type.removesuffix("!"), text)
        fields.append(field)
        _referenced(found, resolved, attr)
    if entity is not None:
        fields += [_relation_field(found, resolved, r) for r in relations_of(resolved, name)]
    found.types[name] = GqlTypeIR(
        "type", name, description, "Node" if node else "", fields=tuple(fields)
    )


def _attribute_field(attr: Attr) -> GqlFieldIR:
    return GqlFieldIR(field_name(attr.name), attribute_type(attr), attr.spec.description)


def _referenced(found: _Collected, resolved: Resolved, attr: Attr) -> None:
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
        _referenced(found, resolved, attr_of_struct)


def _connection(found: _Collected, node: str) -> None:
    """Declares the Relay connection of `node` (its edge, and PageInfo)."""
    if f"{node}Connection" in found.types:
        return
    found.types["PageInfo"] = PAGE_INFO
    found.types[f"{node}Edge"] = GqlTypeIR(
        "type",
        f"{node}Edge",
        "One node of a page.",
        fields=(
            GqlFieldIR("node", f"{node}!", ""),
            GqlFieldIR("cursor", "String!", "Continues after this node."),
        ),
    )
    found.types[f"{node}Connection"] = GqlTypeIR(
        "type",
        f"{node}Connection",
        "A page, Relay style.",
        fields=(
            GqlFieldIR("edges", f"[{node}Edge!]!", ""),
            GqlFieldIR("pageInfo", "PageInfo!", ""),
        ),
    )


def _program(found: _Collected) -> ApiIR:
    """Scalars first, then every type by name, then Query; nothing without a pattern."""
    if not found.roots:
        return ApiIR(())
    types = dict(found.types)
    roots = sorted(found.roots, key=lambda f: f.name)
    if any(t.implements == "Node" for t in types.values()):
        types["Node"] = NODE
        roots.insert(0, GqlFieldIR("node", "Node", "Any object by its global id.", "id: ID!"))
    text = " ".join(f"{f.type} {f.args}" for t in [*types.values()] for f in t.fields)
    named = set(re.findall(r"\w+", text + " " + " ".join(f"{f.type} {f.args}" for f in roots)))
    scalars = tuple(GqlTypeIR("scalar", n, about) for n, about in SCALARS.items() if n in named)
    query = GqlTypeIR("type", "Query", "The reads the spec names.", fields=tuple(roots))
    definitions = (*scalars, *(types[n] for n in sorted(types)), query)
    return ApiIR(tuple(_printed(d) for d in definitions))


def _printed(definition: GqlTypeIR) -> GqlTypeIR:
    """The definition with its descriptions as SDL prints them."""
    fields = tuple(replace(f, description=described(f.description)) for f in definition.fields)
    return replace(definition, description=described(definition.description), fields=fields)

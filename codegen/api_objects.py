"""The object types of a spec's API (api.graphql): an entity's type with its attributes as
camelCase fields and its relations, the enums and structs they name, and what a pattern's
field shows (its object types, the union of several, its Relay connection), each declared
once as the roots and relations that show it are found."""

from __future__ import annotations

from dataclasses import dataclass, field

from .api_types import argument_type, attribute_type, field_name, first_argument, root_field, shown
from .ir_api import GqlFieldIR, GqlTypeIR
from .lower_queries import returned_classes
from .pytypes import camel, member_name
from .relations import Relation, refusable, relations_of
from .resolve import Attr, Entity, Resolved
from .rules import Rule
from .summaries import Summary, summary_of

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


@dataclass
class Collected:
    """The types and root fields found so far, by name."""

    types: dict[str, GqlTypeIR]
    roots: list[GqlFieldIR]
    guarded: frozenset[tuple[str, str]]
    """(entity, attribute) of each attribute with a read rule of its own."""
    rules: dict[str, Rule]
    """Each pattern's rule (none without authorization)."""
    refetchable: frozenset[str] = field(default_factory=frozenset)
    """The entities a get pattern reads: Nodes, which `node` refetches."""


def shown_as(resolved: Resolved, entity: str) -> str:
    """The type an entity's items show as: the entity it is a plain copy of (its
    `attributes_from`, which `copies` it attribute for attribute, and whose attribute rules
    hold every one of its own), else its own."""
    known = resolved.entities.get(entity)
    source = None if known is None else known.spec.attributes_from
    if source is None or source not in resolved.entities:
        return entity
    origin = resolved.entities[source].spec
    plain = any(copy.entity == entity and not copy.args for copy in origin.copies.values())
    return source if plain and _rules(known) <= _rules(resolved.entities[source]) else entity


def _rules(entity: Entity | None) -> set[tuple[str, str]]:
    """The read rules of an entity's single attributes: the type it shows as guards them."""
    access = None if entity is None else entity.spec.access
    return set() if access is None else set(access.attributes.items())


def shown_classes(resolved: Resolved, name: str) -> tuple[str, ...]:
    """The type of each entity a query returns: a summary's class, or what it shows as."""
    classes = returned_classes(resolved.spec.patterns[name], resolved)
    return tuple(shown_as(resolved, c) for c in classes)


def connection_item(resolved: Resolved, name: str) -> str:
    """What a query's connection holds: its one type, or the union of its types."""
    classes = shown_classes(resolved, name)
    return classes[0] if len(classes) == 1 else camel(name) + "Item"


def pattern_item(found: Collected, resolved: Resolved, name: str) -> str:
    """Declares what a query's connection holds (each class it returns, their union when
    several, the connection) and names it."""
    pattern = resolved.spec.patterns[name]
    classes = shown_classes(resolved, name)
    for entity_name, class_name in zip(pattern.returns, classes, strict=True):
        entity = resolved.entities[entity_name]
        summary = summary_of(resolved, entity, pattern.index)
        if summary is None:
            entity_type(found, resolved, entity_name)
            continue
        attrs = _summary_attrs(summary, entity)
        about = f"What {pattern.index} holds of {entity_name}."
        object_type(found, resolved, class_name, False, attrs, about, entity_name)
    item = connection_item(resolved, name)
    if len(classes) > 1:
        field = root_field(resolved, name) or field_name(name)
        found.types[item] = GqlTypeIR("union", item, f"What {field} returns.", members=classes)
    connection(found, item)
    return item


def _summary_attrs(summary: Summary, entity: Entity) -> dict[str, Attr]:
    """The attributes a summary holds: those in its keys, then the included ones."""
    held = set(summary.from_keys) | set(summary.included)
    return {name: attr for name, attr in entity.attrs.items() if name in held}


def connection(found: Collected, node: str) -> None:
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


def entity_type(found: Collected, resolved: Resolved, name: str) -> str:
    """Declares the object type an entity's items show as (a Node when a get reads it)
    and names it."""
    name = shown_as(resolved, name)
    object_type(found, resolved, name, name in found.refetchable)
    return name


def relation_field(found: Collected, resolved: Resolved, relation: Relation) -> GqlFieldIR:
    """A relation's field: what its pattern answers (declared), nullable where its rule may
    refuse the caller or a parent may lack a bound attribute; through `via`, a connection
    of what that relation of each item answers."""
    pattern = resolved.spec.patterns[relation.pattern]
    guarded = refusable(found.rules.get(relation.pattern))
    nullable = (guarded or relation.optional) and not relation.required
    args = ""
    if relation.operation == "get":
        kind, nullable = entity_type(found, resolved, str(pattern.entity)), True
    elif relation.operation == "batch_get":
        kind = f"[{entity_type(found, resolved, str(pattern.entity))}!]"
    else:
        if relation.via is None:
            item = pattern_item(found, resolved, relation.pattern)
        else:
            (returned,) = pattern.returns
            item = entity_type(found, resolved, _via_target(resolved, returned, relation.via))
            connection(found, item)
        kind = f"[{item}!]" if relation.listed else f"{item}Connection"
        free = [f"{field_name(p.name)}: {argument_type(p)}" for p in relation.free]
        first = first_argument(pattern)
        paging = [first] if relation.listed else [first, "after: String"]
        bounds = [
            f"{field_name(p.name)}: {argument_type(p).removesuffix('!')}" for p in relation.bounds
        ]
        args = ", ".join([*free, *paging, *bounds])
    text = relation.description
    if relation.via is not None:
        stop = "" if not text or text.endswith((".", "!", "?")) else "."
        text = f"{text}{stop} One the caller may not read, or gone, has no edge."
    if guarded:
        stop = "" if not text or text.endswith((".", "!", "?")) else "."
        refused = "FORBIDDEN, and its parent null," if relation.required else "Null with FORBIDDEN"
        text = f"{text}{stop} {refused} for a caller its pattern's rule refuses."
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
    found.types[name] = GqlTypeIR("type", name, "")  # declared: a relation back to it stops
    entity = resolved.entities.get(name)
    owner = owner or name
    own = attrs if attrs is not None else (entity.attrs if entity else {})
    description = about if about is not None else (entity.spec.description if entity else "")
    node = node and "id" not in own
    fields = [GqlFieldIR("id", "ID!", "Its global id.")] if node else []
    for attr in filter(shown, own.values()):
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
    inner = [a for a in resolved.struct_attrs[struct].values() if shown(a)]
    fields = tuple(
        GqlFieldIR(field_name(a.name), attribute_type(a), a.spec.description) for a in inner
    )
    found.types[struct] = GqlTypeIR(
        "type", struct, resolved.spec.structs[struct].description, fields=fields
    )
    for attr_of_struct in inner:
        referenced(found, resolved, attr_of_struct)


def _via_target(resolved: Resolved, entity: str, via: str) -> str:
    """The entity that the `via` relation of `entity`'s items reads (a get; checked)."""
    relation = resolved.entities[entity].spec.relations[via]
    return str(resolved.spec.patterns[relation.pattern].entity)

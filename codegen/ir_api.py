"""The intermediate representation of a package's GraphQL API: the SDL's definitions
(api.graphql) and what answers each of their fields (api.py)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class GqlFieldIR:
    """A field of a GraphQL type (or an input's), with its arguments as SDL."""

    name: str
    type: str
    description: str
    args: str = ""


@dataclass(frozen=True, slots=True)
class GqlTypeIR:
    """One definition of the API's SDL: a scalar, interface, type, input, enum or union."""

    kind: str
    name: str
    description: str
    implements: str = ""
    fields: tuple[GqlFieldIR, ...] = ()
    values: tuple[str, ...] = ()
    members: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ApiIR:
    """The GraphQL API the spec's defaults give, its definitions in the order printed."""

    definitions: tuple[GqlTypeIR, ...]


@dataclass(frozen=True, slots=True)
class ArgBindingIR:
    """A key argument's GraphQL name, the function's parameter, its GraphQL named type, and
    a path's separator in global ids ("" for a list)."""

    name: str
    param: str
    kind: str
    separator: str = ""


@dataclass(frozen=True, slots=True)
class RootBindingIR:
    """A root field and the generated function (module alias and name) that answers it."""

    field: str
    operation: str
    function: str
    args: tuple[ArgBindingIR, ...]
    scoped: bool
    page: str = ""
    """A query's page sizes (the constant of its module), "" for a get."""
    by_id: str = ""
    """A get taking its type's global id: the type it names; "" for key arguments."""
    listed: bool = False
    """A query answering a list of its first page."""


@dataclass(frozen=True, slots=True)
class BoundIR:
    """A key argument a relation gives from its parent: its name in the pattern's rule,
    the function's parameter, the parent's attribute."""

    name: str
    param: str
    attribute: str


@dataclass(frozen=True, slots=True)
class RelationBindingIR:
    """A relation's field and what answers it: the pattern's function, the key arguments
    from the parent and from the field, the pattern's guard with its owners ("": no rule),
    the batch get loading a get's items, a query's page sizes, a list's most items."""

    field: str
    operation: str
    function: str
    bound: tuple[BoundIR, ...]
    args: tuple[ArgBindingIR, ...]
    scoped: bool
    guard: str = ""
    owners: tuple[str, ...] = ()
    batch: str = ""
    page: str = ""
    most: int | None = None
    via: RelationBindingIR | None = None
    """The relation of a query's items whose answers the field shows in their place."""
    listed: bool = False
    """A query answering a list of its first page."""
    first_page: tuple[str, str] | None = None
    """The parent's list attribute and the function making the first page from it."""
    ranged: str = ""
    """The pattern answering when a bound is given, "" for none."""
    bounds: tuple[ArgBindingIR, ...] = ()


@dataclass(frozen=True, slots=True)
class TypeBindingIR:
    """An object type, its model class, each field's attribute, and its Node key parts and
    get (none: not a Node)."""

    name: str
    fields: tuple[tuple[str, str], ...]
    node: tuple[ArgBindingIR, ...]
    get: str
    scoped: bool
    guards: tuple[GuardBindingIR, ...] = ()
    relations: tuple[RelationBindingIR, ...] = ()
    copies: tuple[str, ...] = ()
    """The model classes of the entities shown as this type (its plain copies)."""


@dataclass(frozen=True, slots=True)
class GuardBindingIR:
    """A field's read guard and the attributes its owner conditions read."""

    field: str
    function: str
    owners: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BindingsIR:
    """The api.py of a package: what answers each field of its api.graphql."""

    imports: tuple[str, ...]
    roots: tuple[RootBindingIR, ...]
    types: tuple[TypeBindingIR, ...]
    enums: tuple[str, ...]
    writes: tuple[WriteBindingIR, ...] = ()
    watches: tuple[WatchBindingIR, ...] = ()


@dataclass(frozen=True, slots=True)
class WriteBindingIR:
    """An entity's writes as api.py binds them: its key builder and parts, the writes it
    takes, who may make each (a lambda's text), its derived items (name, entity, fields,
    unique, fold) and counts (parent, key builder, bound attributes, attribute, cap), and the
    attributes others' writes count."""

    entity: str
    key: str
    parts: tuple[str, ...]
    operations: tuple[str, ...]
    scoped: bool
    versioned: bool
    allow: tuple[tuple[str, str], ...]
    derived: tuple[tuple[str, str, tuple[tuple[str, str], ...], bool, str | None], ...]
    counts: tuple[tuple[str, str, tuple[str, ...], str, int], ...]
    counters: tuple[str, ...] = ()
    generated: tuple[tuple[str, str], ...] = ()
    parents: tuple[tuple[str, str, tuple[str, ...]], ...] = ()
    """Items that must exist for a create: (entity, key builder, bound attributes)."""
    expires_after: int | None = None
    """Seconds after its creation an item expires."""
    owned: tuple[
        tuple[
            str,
            str,
            tuple[str, ...],
            tuple[tuple[str, str | None, tuple[tuple[str, str], ...]], ...],
        ],
        ...,
    ] = ()
    """Items deleted after it: (name, plan function, bound attributes, removals by type:
    (type, the entity whose delete removes it or None, its key parts from the item))."""
    fielded: bool = True
    """Whether its writes are Mutation fields (`mutations = false` says not)."""


@dataclass(frozen=True, slots=True)
class WatchBindingIR:
    """A Subscription field as api.py binds it (or the watch of one `changes = false` hides,
    under the name it would have): the entity's type discriminator, its key arguments, its
    key builder (or, following a query pattern, its plan builder and index), and the
    pattern's guard with the owners it reads."""

    field: str
    entity_type: str
    args: tuple[ArgBindingIR, ...]
    key: str
    guard: str
    owners: tuple[str, ...]
    plan: str = ""
    index: str = ""
    fielded: bool = True
    """Whether it is a Subscription field (`changes = false` says not: an extension's
    subscription may follow it)."""

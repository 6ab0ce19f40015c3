"""What a generated package's `api.py` declares of its API (api.graphql): the function that
answers each root field with its arguments, the attribute each field of a type reads, how a
type's global id is made, the pattern each relation follows, and the enum classes. Codegen
writes it; `executable` reads it."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal

from keygraph.entity import EntityDef
from keygraph.paging import PageSize
from keygraph.plan import Query
from keygraph.writes import Writes

Operation = Literal["get", "batch_get", "query"]


@dataclass(frozen=True, slots=True)
class Arg:
    """A key argument: its GraphQL name, the function's parameter, and its GraphQL named
    type ("ID", "String", "Int", "Long", "DateTime", "Date", "Path" or an enum's); a path's
    `separator` joins its parts in a global id (keygraph.api.ids), None for a list."""

    name: str
    param: str
    kind: str
    separator: str | None = None


@dataclass(frozen=True, slots=True)
class Root:
    """A root field and the generated function that answers it; `scoped`: whether it takes
    the caller's tenant first. A batch get's `args` are the parts of one key; a query's
    `page` its page sizes, and `listed` whether it answers a list of its first page, not a
    connection; a get `by_id` takes the global id of that type, not its key."""

    operation: Operation
    function: Callable[..., Awaitable[Any]]
    args: tuple[Arg, ...]
    scoped: bool = True
    page: PageSize | None = None
    by_id: str | None = None
    listed: bool = False


@dataclass(frozen=True, slots=True)
class Bound:
    """A key argument a relation gives from its parent: its name (as the pattern's rule
    names an owner), the function's parameter, and the parent's attribute."""

    name: str
    param: str
    attribute: str


@dataclass(frozen=True, slots=True)
class Guard:
    """A field's read rule: the guard (generated/authz.py) asked with the caller and the
    attributes its owner conditions name, before the field answers."""

    function: Callable[..., bool]
    owners: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Relation:
    """A field answered by a pattern from its parent: `bound` are the key arguments the
    parent's attributes give (a batch get's one from a list attribute), `args` a query's
    others, which the field takes. A get or batch get asks `guard` (its pattern's rule,
    owners by name) for each key before loading it with the others of its turn: a get's by
    `batch`, a batch get of the same entity, when there is one. `page`: a query's page
    sizes; `most`: the most items a batch get's list attribute holds."""

    operation: Operation
    function: Callable[..., Awaitable[Any]]
    bound: tuple[Bound, ...]
    args: tuple[Arg, ...] = ()
    scoped: bool = True
    guard: Guard | None = None
    batch: Callable[..., Awaitable[Any]] | None = None
    page: PageSize | None = None
    most: int | None = None
    via: Relation | None = None
    """A get relation of a query's items: the field shows what it answers for each item,
    in the item's place."""
    listed: bool = False
    """A query's field answers a list of its first page, not a connection."""
    ranged: tuple[Callable[..., Awaitable[Any]], tuple[Arg, ...]] | None = None
    """A query's pattern over a range of the same items and its bounds, optional arguments
    of the field: given any, it answers, a bound left out at its type's end."""
    first_page: tuple[str, Callable[..., Any]] | None = None
    """A query's parent's list attribute, and the function making the first page from it
    with no read (where the parent has it)."""


@dataclass(frozen=True, slots=True)
class Type:
    """An object type and the model it shows: each GraphQL field's attribute; with a `get`,
    a Node whose global id holds the `node` parts of its key (none for a type with one item
    a tenant); the fields a rule guards; its relations."""

    model: type
    fields: dict[str, str]
    node: tuple[Arg, ...] = ()
    get: Callable[..., Awaitable[Any]] | None = None
    scoped: bool = True
    guards: dict[str, Guard] = field(default_factory=dict)
    relations: dict[str, Relation] = field(default_factory=dict)
    copies: tuple[type, ...] = ()
    """The models of the entities shown as this type: its plain copies under other keys."""


@dataclass(frozen=True, slots=True)
class Watch:
    """A Subscription field: the changes of the item of type `entity_type` whose key `key`
    builds from `args` (after the tenant), or of the items of that type a query pattern
    reads (its `plan` builder, on `index`, None for the table's), shown to callers `guard`
    (the get or query pattern's rule, owners by name) lets read them."""

    entity_type: str
    args: tuple[Arg, ...]
    key: Callable[..., Any] | None = None
    guard: Guard | None = None
    plan: Callable[..., Query] | None = None
    index: str | None = None
    fielded: bool = True
    """Whether it is a Subscription field; else (`changes = false`) it keeps the name its
    field would have, for an extension's subscription to follow (keygraph.api.changes)."""


@dataclass(frozen=True, slots=True)
class Api:
    """A generated package's API: its SDL and what answers it; `writes` by entity, which
    its Mutation fields make; `watches` by Subscription field (or the name of the field a
    pattern's `changes = false` hides)."""

    sdl: str
    roots: dict[str, Root]
    types: dict[str, Type]
    enums: dict[str, type[Enum]]
    writes: dict[str, Writes] = field(default_factory=dict)
    watches: dict[str, Watch] = field(default_factory=dict)
    entities: dict[str, EntityDef] = field(default_factory=dict)
    """Every entity by its type discriminator, to read the change stream's records."""
    tenant_prefixes: tuple[str, ...] = ()
    """The text before the tenant in its partition keys: where a replay of the tenant's
    items reads."""
    fieldless: frozenset[str] = frozenset()
    """Entities whose writes are no Mutation field (`mutations = false`): code and an
    extension's fields call them."""

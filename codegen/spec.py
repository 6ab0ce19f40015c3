"""Pydantic models of the spec file: its shape only. Cross-references and key design are
checked later (checks.py, lint.py)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

AttrType = Literal[
    "id", "string", "int", "float", "bool", "datetime", "date", "enum", "path", "list", "struct"
]
ArgType = Literal["id", "string", "int", "datetime", "date", "path"]
Number = int | float


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class IndexSpec(_Strict):
    description: str = ""
    partition_key: str
    sort_key: str | None = None
    projection: Literal["ALL", "KEYS_ONLY", "INCLUDE"] = "ALL"
    include: tuple[str, ...] = ()


Tenancy = Literal["tenant", "global"]
StreamView = Literal["KEYS_ONLY", "NEW_IMAGE", "OLD_IMAGE", "NEW_AND_OLD_IMAGES"]


class TableSpec(_Strict):
    name: str = Field(min_length=3, max_length=255, pattern=r"^[A-Za-z0-9_.-]+$")
    partition_key: str
    sort_key: str
    tenancy: Tenancy = "tenant"
    """Whether items belong to a tenant (their partition keys hold it) or to everyone."""
    ttl_attribute: str | None = None
    point_in_time_recovery: bool = False
    stream: StreamView | None = None
    """The table's change stream and what its records hold (DynamoDB's StreamViewType)."""
    indexes: dict[str, IndexSpec] = {}


class AttributeSpec(_Strict):
    type: AttrType
    description: str = ""
    optional: bool = False
    min_length: int | None = Field(default=None, ge=0)
    max_length: int | None = Field(default=None, ge=1)
    pattern: str | None = None
    ge: Number | None = None
    le: Number | None = None
    width: int | None = Field(default=None, ge=1, le=38)
    values: tuple[str, ...] | None = None
    of: str | None = None
    min_items: int | None = Field(default=None, ge=0)
    max_items: int | None = Field(default=None, ge=1)
    id_separator: str | None = None
    """A path's parts in its entity's global id joined by this character (`OrgNode:a.b`),
    in place of a JSON list (`OrgNode:[["a","b"]]`)."""
    default: str | int | bool | None = None
    """The value of an item stored without the attribute (one written before the spec had
    it): lets a spec add a required attribute that a migration then backfills."""
    generated: Literal["id", "now"] | None = None
    """Set by the write that creates the item, never by its caller: a new id (a ULID, which
    sorts by time), or the time of the write; no update changes it."""
    field: Literal[False] | None = None
    """false: its type shows no field of it (its global id or a relation stands for it);
    write inputs still take it."""


class StructSpec(BaseModel):
    """`description` plus one attribute table per field."""

    model_config = ConfigDict(extra="allow", frozen=True)
    __pydantic_extra__: dict[str, AttributeSpec] = Field(init=False)
    description: str = ""

    @property
    def fields(self) -> dict[str, AttributeSpec]:
        return dict(self.__pydantic_extra__ or {})


class AccessSpec(_Strict):
    """Who may read, create, update and delete an entity's items, and read each attribute
    (rules in the language of codegen/rules.py). `default` is the rule of every operation
    not given; an operation with neither is a lint error (deny by default)."""

    default: str | None = None
    read: str | None = None
    create: str | None = None
    update: str | None = None
    delete: str | None = None
    attributes: dict[str, str] = {}
    """Read rules of single attributes; an attribute without one has the entity's."""


class AuthorizationSpec(_Strict):
    """Turns authorization on: every entity then needs its access rules and every pattern
    its `allow` rule."""

    roles: tuple[str, ...] = Field(min_length=1)
    """The roles rules may name; another name in a rule is a typo."""
    rules: dict[str, str] = {}
    """Named rules, used by name in other rules."""


class RelationSpec(_Strict):
    """A field of the entity's GraphQL type answered by a pattern: `args` gives the
    pattern's key arguments from the entity's attributes (argument = "attribute"), a batch
    get's one from a list attribute; a query's other arguments are the field's."""

    pattern: str
    args: dict[str, str] = {}
    description: str = ""
    """The field's description; the pattern's when left out."""
    via: str | None = None
    """A relation of the items the pattern returns: the field shows, in their place, what
    that relation answers for each (a group's members as users, through memberships)."""
    list: bool = False
    """A query's field answers a list of its first page (`first`), not a connection."""
    ranged: str | None = None
    """A query pattern reading the same items in a range of their sort key (a user's orders
    between two times): the field takes its other arguments as optional ones, and given
    any, that pattern answers, a bound left out at its type's end."""
    nullable: Literal[False] | None = None
    """false: the field is non-null, so that a refusal by the pattern's rule nulls its
    parent (for a contract that declares it so); nullable where that rule may refuse when
    left out."""
    first_page: str | None = None
    """A list attribute of the entity holding, in the pattern's order, the value `via`
    follows of each item the pattern reads: the first page comes from it, with no read (a
    user's group_ids, for its memberships' groups); the pattern reads it where it is absent,
    and every later page."""


Write = Literal["create", "update", "delete"]


class DerivedSpec(_Strict):
    """Another entity's item written, moved and deleted in the same transaction as this
    entity's: `args` fills its attributes from this entity's (attribute = "attribute"),
    each of the same name when left out."""

    entity: str
    args: dict[str, str] = {}
    fold: Literal["casefold"] | None = None
    """A claim's value case-folded (Unicode's caseless match, in NFC) before it keys the
    claim, so that two spellings of one value cannot both be claimed."""


class ParentSpec(_Strict):
    """An item that must exist when one of this entity's items is created, checked in the
    same transaction: `args` gives its key from this entity's attributes, each of the same
    name when left out."""

    entity: str
    args: dict[str, str] = {}


class OwnsSpec(_Strict):
    """Items deleted after their owner: what the query `pattern` finds, its key arguments
    given from this entity's attributes (argument = "attribute"), each of the same name when
    left out."""

    pattern: str
    args: dict[str, str] = {}


class CountSpec(_Strict):
    """A count on a parent item, changed in the same transaction as each item of this
    entity written or deleted, never above `max`: `args` gives the parent's key from this
    entity's attributes, `attribute` is the parent's count."""

    entity: str
    args: dict[str, str] = {}
    attribute: str
    max: int = Field(ge=1)


class EntitySpec(_Strict):
    type: str = Field(pattern=r"^[A-Z][A-Z0-9_]*$")
    description: str = ""
    tenancy: Tenancy | None = None
    """The table's tenancy when left out."""
    attributes: dict[str, AttributeSpec] = {}
    attributes_from: str | None = None
    keys: dict[str, str]
    access: AccessSpec | None = None
    relations: dict[str, RelationSpec] = {}
    """Fields of its GraphQL type that follow a pattern from one of its items."""
    writes: tuple[Write, ...] = ()
    """The writes its API takes (createX, updateX, deleteX); access says who may."""
    mutations: Literal[False] | None = None
    """false: its writes give no Mutation field (code and an extension's fields call them)."""
    unique: dict[str, DerivedSpec] = {}
    """Attributes no two of its items share in a tenant, each held by a claim item (its
    entity keyed by the value alone)."""
    copies: dict[str, DerivedSpec] = {}
    """Items that carry its data under other keys, kept equal to it."""
    counts: dict[str, CountSpec] = {}
    """Counts on parent items, kept under a cap."""
    requires: dict[str, ParentSpec] = {}
    """Parent items that must exist for one of its items to be created."""
    owns: dict[str, OwnsSpec] = {}
    """Items its delete takes with it, after it (a user's orders): a task removes them."""
    expires_after: str | None = Field(default=None, pattern=r"^[1-9][0-9]*[smhd]$")
    """How long after its creation an item expires ("30d", "12h", "15m", "90s"): the create
    sets the table's TTL attribute to then, in epoch seconds, unless given one."""


class ArgSpec(_Strict):
    type: ArgType
    description: str = ""
    width: int | None = Field(default=None, ge=1, le=38)
    prefix_of: str | None = None


class SortSpec(_Strict):
    eq: str | None = None
    begins_with: str | None = None
    between: tuple[str, str] | None = None
    lt: str | None = None
    le: str | None = None
    gt: str | None = None
    ge: str | None = None
    collection: str | None = None
    """An item and every item keyed below it at a delimiter (its item collection)."""


class PageSizeSpec(_Strict):
    default: int = Field(ge=1)
    max: int = Field(ge=1)


DEFAULT_PAGE_SIZE = PageSizeSpec(default=20, max=100)
"""A query's page sizes when its spec gives none."""


class ShardSpec(_Strict):
    placeholder: str
    count: int = Field(ge=2, le=100)


class PatternSpec(_Strict):
    description: str = ""
    operation: Literal["get", "batch_get", "query"]
    entity: str | None = None
    index: str = "table"
    partition: str | None = None
    sort: SortSpec | None = None
    args: dict[str, ArgSpec] = {}
    direction: Literal["ascending", "descending"] = "ascending"
    returns: tuple[str, ...] = ()
    page_size: PageSizeSpec | None = None
    shards: ShardSpec | None = None
    allow: str | None = None
    """Who may run the pattern: a rule decided from the caller and the pattern's key
    arguments alone, before any read."""
    field: Annotated[str, Field(pattern=r"^[a-z][A-Za-z0-9]*$")] | Literal[False] | None = None
    """Its root Query field's name (and its subscription's, with `Changed`): the pattern's
    name in camelCase when left out; false for none (relations and code still run it)."""
    changes: Literal[False] | None = None
    """false: no subscription follows what it reads (its root field stays)."""
    by: Literal["key", "id"] = "key"
    """What a get's root field takes: its key arguments, or (`id`) its type's global id."""
    list: bool = False
    """Its root field answers a list of its first page (`first`), not a connection: for a
    partition known to hold few items."""


class Spec(_Strict):
    table: TableSpec
    authorization: AuthorizationSpec | None = None
    structs: dict[str, StructSpec] = {}
    entities: dict[str, EntitySpec]
    patterns: dict[str, PatternSpec] = {}

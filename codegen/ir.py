"""The intermediate representation templates render: every name, type and expression is
decided here, so templates only lay text out."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .ir_api import ApiIR, BindingsIR


@dataclass(frozen=True, slots=True)
class KeyTemplateIR:
    """One key attribute's value: a private function rendering its template."""

    func: str
    signature: str
    expr: str


@dataclass(frozen=True, slots=True)
class PartIR:
    name: str
    annotation: str
    expr: str


@dataclass(frozen=True, slots=True)
class SplitIR:
    var: str
    attribute: str


@dataclass(frozen=True, slots=True)
class KeyFnIR:
    """A key builder (`key`, `gsi1_key`) and its parser."""

    name: str
    doc: str
    signature: str
    result: str
    parse_name: str
    parts_class: str
    parts: tuple[PartIR, ...]
    splits: tuple[SplitIR, ...]
    mismatch: str


@dataclass(frozen=True, slots=True)
class KeysModuleIR:
    module: str
    entity: str
    imports: tuple[str, ...]
    templates: tuple[KeyTemplateIR, ...]
    functions: tuple[KeyFnIR, ...]


@dataclass(frozen=True, slots=True)
class FieldIR:
    name: str
    annotation: str
    store: str
    load: str
    check: str | None = None
    """The check that its loaded value (in `var`) needs no validation; None: it always
    needs it (codegen/stored_checks.py)."""

    @property
    def var(self) -> str:
        """The local name of its loaded value in `from_item`."""
        return f"v_{self.name}"


@dataclass(frozen=True, slots=True)
class SparseKeyIR:
    condition: str
    call: str


@dataclass(frozen=True, slots=True)
class ModelIR:
    module: str
    class_name: str
    doc: str
    type_value: str
    imports: tuple[str, ...]
    fields: tuple[FieldIR, ...]
    required: tuple[FieldIR, ...]
    optional: tuple[FieldIR, ...]
    key_calls: tuple[str, ...]
    sparse_keys: tuple[SparseKeyIR, ...]
    tenant_scoped: bool = True
    matchers: tuple[tuple[str, str], ...] = ()
    """(name, pattern) of each module-level pattern matcher the checks use."""

    @property
    def checked(self) -> bool:
        """Whether `from_item` may skip validation: every field has a check."""
        return bool(self.fields) and all(f.check is not None for f in self.fields)


@dataclass(frozen=True, slots=True)
class SummaryIR:
    """A summary model: what a partial index holds of an entity."""

    module: str
    class_name: str
    doc: str
    type_value: str
    imports: tuple[str, ...]
    fields: tuple[FieldIR, ...]
    key_reads: tuple[tuple[str, str], ...]
    """(local variable, key parser) for each key its fields are parsed out of."""


@dataclass(frozen=True, slots=True)
class EnumMemberIR:
    name: str
    value: str


@dataclass(frozen=True, slots=True)
class EnumIR:
    class_name: str
    doc: str
    members: tuple[EnumMemberIR, ...]


@dataclass(frozen=True, slots=True)
class GetIR:
    name: str
    doc: str
    signature: str
    """Every parameter, tenant first when the entity has tenants ("" when none)."""
    call: str
    key_call: str
    model: str
    guard: str = ""
    """The guard call deciding whether the session's caller may run it ("" without rules)."""
    floats: str = ""
    """The constant naming the numbers it reads as floats ("" when none)."""


@dataclass(frozen=True, slots=True)
class BatchGetIR:
    name: str
    doc: str
    scope: str
    """"tenant: str, " for an entity with tenants, else nothing."""
    scope_arg: str
    ref_type: str
    key_call: str
    model: str
    guard: str = ""
    floats: str = ""


@dataclass(frozen=True, slots=True)
class QueryIR:
    name: str
    doc: str
    signature: str
    """Every parameter, tenant first when the pattern is a tenant's ("" when none)."""
    scope_arg: str
    """What binds its cursors: the tenant, or "" for a pattern over global entities."""
    call: str
    partition: str
    index: str
    sort: str
    forward: str
    page_const: str
    default_size: int
    max_size: int
    args: str
    key_attributes: str
    result: str
    returns: tuple[str, ...]
    """The classes of what it returns: entity models, or summaries on a partial index."""
    typed: bool
    """Whether its items carry `_type` (a partial index may leave it out)."""
    shard_count: int
    shard_var: str
    index_partition_key: str
    merge_order: str
    guard: str = ""
    floats: str = ""


@dataclass(frozen=True, slots=True)
class QueriesModuleIR:
    module: str
    entity: str
    imports: tuple[str, ...]
    gets: tuple[GetIR, ...]
    batch_gets: tuple[BatchGetIR, ...]
    queries: tuple[QueryIR, ...]
    sharded: tuple[QueryIR, ...]
    floats: tuple[tuple[str, str, str], ...] = ()
    """(constant, frozenset literal, docstring) of each set of numbers read as floats."""
    kept: tuple[KeptIR, ...] = ()


@dataclass(frozen=True, slots=True)
class KeptIR:
    """A query's first page made from values a parent keeps of its items (first_page):
    the function's name, the query's, the list parameter, each item's key call and the
    attributes it holds (name -> expression of `value` and the parameters)."""

    name: str
    query: QueryIR
    values: str
    key_call: str
    attributes: tuple[tuple[str, str], ...]
    model: str


@dataclass(frozen=True, slots=True)
class IndexIR:
    name: str
    partition_key: str
    sort_key: str
    projection: str
    include: str


@dataclass(frozen=True, slots=True)
class WorksheetRowIR:
    name: str
    description: str
    operation: str
    index: str
    condition: str
    example: str
    who: str = ""
    """Who may run it, when the spec has authorization."""


@dataclass(frozen=True, slots=True)
class EntityKeyRowIR:
    entity: str
    type_value: str
    index: str
    keys: str
    example: str


@dataclass(frozen=True, slots=True)
class EntityRowIR:
    """One entity in the registry table migrations read."""

    type_value: str
    class_name: str
    module: str
    versioned: bool
    tenant_scoped: bool


@dataclass(frozen=True, slots=True)
class ProgramIR:
    source: str
    table_name: str
    partition_key: str
    sort_key: str
    ttl_attribute: str
    point_in_time_recovery: bool
    stream: str
    indexes: tuple[IndexIR, ...]
    enums: tuple[EnumIR, ...]
    structs: tuple[ModelIR, ...]
    models: tuple[ModelIR, ...]
    summaries: tuple[SummaryIR, ...]
    keys: tuple[KeysModuleIR, ...]
    queries: tuple[QueriesModuleIR, ...]
    worksheet: tuple[WorksheetRowIR, ...]
    entity_keys: tuple[EntityKeyRowIR, ...]
    entity_rows: tuple[EntityRowIR, ...]
    fingerprint: str
    tenant_prefixes: str
    api: ApiIR
    bindings: BindingsIR
    authorization: AuthorizationIR | None = None
    policy: tuple[dict[str, Any], ...] = ()
    """The statements of a served API's least privilege (iam.py)."""


@dataclass(frozen=True, slots=True)
class GuardIR:
    """A guard function: whether a caller may do one thing, from its arguments alone."""

    name: str
    doc: str
    params: str
    expr: str


@dataclass(frozen=True, slots=True)
class AccessRowIR:
    """One line of AUTHORIZATION.md."""

    subject: str
    operation: str
    who: str
    guard: str


@dataclass(frozen=True, slots=True)
class AuthorizationIR:
    roles: str
    named: tuple[tuple[str, str], ...]
    guards: tuple[GuardIR, ...]
    rows: tuple[AccessRowIR, ...]

"""An operation compiled into plans: per object type and selection, the fields to fill, each
with what gives its value (an attribute, or its resolver called directly) and how its value
completes (leaf, list, object, interface or union). Fields are collected as the executor
collects them (fragments, @skip/@include, merged fields), so a plan holds for every request
giving the same values to the operation's @skip/@include variables, and is kept for them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from graphql import (
    FieldNode,
    GraphQLBoolean,
    GraphQLField,
    GraphQLFloat,
    GraphQLID,
    GraphQLInt,
    GraphQLInterfaceType,
    GraphQLLeafType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLOutputType,
    GraphQLSchema,
    GraphQLString,
    GraphQLUnionType,
    OperationDefinitionNode,
    OperationType,
)
from graphql.execution.collect_fields import (
    FieldDetails,
    FragmentDetails,
    collect_fields,
    collect_subfields,
)
from graphql.execution.executor import default_field_resolver
from graphql.execution.values import VariableValues
from graphql.pyutils import Path

from .calls import core_arguments, core_info, literal
from .fill import Fill, Plain, compile_fill

ORIGIN = "keygraph.origin"
"""A type's extension naming the class of its values (which need no is_type_of check)."""
ATTRIBUTE = "keygraph.attribute"
"""A field's extension naming the source's attribute that is its value: compiled, it is
read (or filled) without calling the field's resolver, which must answer the same."""
BATCH = "keygraph.batch"
"""A field's extension: its resolver for many sources at once, called as
`batch(context, sources, **arguments)` and answering each source's value (or exception) in
order. Compiled, the field's calls of one wave are one call of it, which must answer what
the field's resolver would for each source."""


class Unsupported(Exception):
    """The operation asks for something the compiler leaves to Strawberry."""


EXACT: dict[str, type] = {
    GraphQLString.name: str,
    GraphQLID.name: str,
    GraphQLBoolean.name: bool,
    GraphQLInt.name: int,
    GraphQLFloat.name: float,
}
"""The Python type whose values each built-in scalar takes and answers unchanged (an int
within 32 bits, a finite float): coercing them would only check."""


def unchanged(value: Any) -> bool:
    """Whether a value of its scalar's EXACT type is within its range: an int within 32
    bits, a finite float (inf - inf is nan), any bool or str."""
    kind = type(value)
    if kind is int:
        return bool(-(2**31) <= value < 2**31)
    return kind is not float or bool(value - value == 0)


@dataclass(eq=False, slots=True)
class Leaf:
    scalar: GraphQLLeafType
    exact: type | None


@dataclass(eq=False, slots=True)
class NonNull:
    inner: Completion


@dataclass(eq=False, slots=True)
class ListOf:
    inner: Completion
    items_nullable: bool


@dataclass(eq=False, slots=True)
class Object:
    plan: ObjectPlan


@dataclass(eq=False, slots=True)
class Abstract:
    abstract: GraphQLInterfaceType | GraphQLUnionType
    plans: dict[str, ObjectPlan]
    """A plan per possible object type, by name."""
    by_class: dict[type, str]
    """The object type name of each class known to be one of the possible types."""


Completion = Leaf | NonNull | ListOf | Object | Abstract


@dataclass(eq=False, slots=True)
class FieldPlan:
    """One response key of an object's selection."""

    key: str
    name: str
    parent_type: GraphQLObjectType
    details: list[FieldDetails]
    nodes: list[FieldNode]
    completion: Completion
    nullable: bool
    leaf: bool
    """Its value is a scalar or enum (or a list of them): it makes no path of its own."""
    typename: bool = False
    attribute: str | None = None
    """A field whose value is the source's attribute of this name."""
    answer_attribute: str | None = None
    """A leaf field with a resolver: the source's attribute holding its answer, when it
    holds a plain value; the fill function reads it."""
    resolver: Callable[..., Any] | None = None
    positional: bool = False
    """Called as graphql-core calls a resolver: (source, info, **arguments); otherwise by
    keyword, as below."""
    pass_self: bool = False
    info_name: str | None = None
    source_names: tuple[str, ...] = ()
    """Keyword parameters given the source object."""
    info_of: Callable[[Any, FieldPlan, Path], Any] | None = None
    """The info its resolver is given, from the executor, the field and its path."""
    takes_arguments: bool = False
    arguments_of: Callable[[Any, FieldPlan], dict[str, Any]] | None = None
    """Its arguments as its resolver takes them, from the executor and the field."""
    literal_arguments: bool = False
    """Its arguments are literals (or defaults): they convert the same for every request."""
    fixed_arguments: dict[str, Any] | None = None
    """Plain literal arguments, once converted."""
    binding: Any = None
    """What the compiler that bound the field keeps to convert its arguments."""
    batch: Callable[..., Any] | None = None
    """Its BATCH resolver: the field's calls of a wave, made as one."""


@dataclass(eq=False, slots=True)
class ObjectPlan:
    object_type: GraphQLObjectType
    fields: list[FieldPlan]
    is_type_of: Callable[[Any, Any], Any] | None
    origin: type | None = None
    """The class of the type's values: its instances need no is_type_of check."""
    fill: Fill | None = None
    """Writes the plain fields (and placeholders for the rest) in one call (fill.py)."""
    rest: list[FieldPlan] = field(default_factory=list)
    """The fields `fill` leaves to the general completion: all of them without `fill`."""
    whole: tuple[Fill, type | None] | None = None
    """`fill` when it answers every field, with the class a value must be of to be filled
    by it (None: any); None when it does not (or a type checks its values but has no class
    to compare with). Set once, as completion reads it for every object."""

    def __post_init__(self) -> None:
        if self.fill is not None and not self.rest:
            if self.is_type_of is None:
                self.whole = (self.fill, None)
            elif self.origin is not None:
                self.whole = (self.fill, self.origin)


@dataclass(eq=False, slots=True)
class OperationPlan:
    root: ObjectPlan
    serial: bool


@dataclass(eq=False)
class CompiledOperation:
    """An operation's plans, one per value of its @skip/@include variables."""

    operation: OperationDefinitionNode
    directive_variables: tuple[str, ...]
    schema: GraphQLSchema
    """The schema it compiles against: an operation's plans hold for it alone."""
    plans: dict[tuple[object, ...], OperationPlan | None] = field(default_factory=dict)


class Compiler:
    """Compiles one operation's selections against a schema, for one set of variables."""

    def __init__(
        self,
        schema: GraphQLSchema,
        fragments: dict[str, FragmentDetails],
        variables: VariableValues,
        operation: OperationDefinitionNode,
    ) -> None:
        self.schema = schema
        self.fragments = fragments
        self.variables = variables
        self.operation = operation

    def compile(self) -> OperationPlan:
        kind = self.operation.operation
        if kind is OperationType.SUBSCRIPTION:
            raise Unsupported("subscriptions")
        root_type = self.schema.get_root_type(kind)
        if root_type is None:
            raise Unsupported("no root type")
        grouped, defers, _ = collect_fields(
            self.schema, self.fragments, self.variables, root_type, self.operation
        )
        if defers:
            raise Unsupported("@defer")
        root = self._object_plan(root_type, grouped)
        return OperationPlan(root, serial=kind is OperationType.MUTATION)

    def _object_plan(
        self, type_: GraphQLObjectType, grouped: dict[str, list[FieldDetails]]
    ) -> ObjectPlan:
        origin = self._origin(type_)
        fields = [self._field_plan(type_, key, details) for key, details in grouped.items()]
        plains = [_plain(type_, field) for field in fields]
        fill = compile_fill(plains)
        rest = [f for f, plain in zip(fields, plains, strict=True) if not (fill and plain.inline)]
        return ObjectPlan(
            type_,
            fields,
            type_.is_type_of,
            origin,
            fill,
            rest,
        )

    def _field_plan(
        self, parent: GraphQLObjectType, key: str, details: list[FieldDetails]
    ) -> FieldPlan:
        nodes = [detail.node for detail in details]
        if any(detail.fragment_variable_values is not None for detail in details):
            raise Unsupported("fragment variables")
        name = nodes[0].name.value
        if name == "__typename":
            return FieldPlan(
                key,
                name,
                parent,
                details,
                nodes,
                NonNull(Leaf(GraphQLString, str)),
                nullable=False,
                leaf=True,
                typename=True,
            )
        definition = parent.fields.get(name)
        if definition is None:
            raise Unsupported(f"{parent.name}.{name}")
        completion = self._completion(definition.type, details)
        plan = FieldPlan(
            key,
            name,
            parent,
            details,
            nodes,
            completion,
            nullable=not isinstance(completion, NonNull),
            leaf=_is_leaf(completion),
            takes_arguments=bool(definition.args or nodes[0].arguments),
        )
        self._bind(plan, definition)
        return plan

    def _origin(self, type_: GraphQLObjectType) -> type | None:
        """The class of the type's values, when every value is of it; raises Unsupported
        for a type the compiler leaves to graphql-core."""
        origin = (type_.extensions or {}).get(ORIGIN)
        return origin if isinstance(origin, type) else None

    def _bind(self, plan: FieldPlan, definition: GraphQLField) -> None:
        """Sets what gives the field's value: its ATTRIBUTE, else its resolver (or
        graphql-core's default) called as graphql-core calls it."""
        attribute = (definition.extensions or {}).get(ATTRIBUTE)
        if isinstance(attribute, str):
            plan.attribute = attribute
            return
        plan.resolver = definition.resolve or default_field_resolver
        batch = (definition.extensions or {}).get(BATCH)
        if callable(batch):
            plan.batch = batch
        plan.positional = True
        plan.info_of = core_info
        if plan.takes_arguments:
            plan.arguments_of = core_arguments
            plan.literal_arguments = literal(plan.nodes[0])

    def _completion(self, type_: GraphQLOutputType, details: list[FieldDetails]) -> Completion:
        if isinstance(type_, GraphQLNonNull):
            return NonNull(self._completion(type_.of_type, details))
        if isinstance(type_, GraphQLList):
            inner = self._completion(type_.of_type, details)
            return ListOf(inner, items_nullable=not isinstance(inner, NonNull))
        if isinstance(type_, GraphQLLeafType):
            return Leaf(type_, EXACT.get(type_.name))
        if isinstance(type_, GraphQLObjectType):
            return Object(self._subplan(type_, details))
        if isinstance(type_, GraphQLInterfaceType | GraphQLUnionType):
            plans: dict[str, ObjectPlan] = {}
            by_class: dict[type, str] = {}
            for possible in self.schema.get_possible_types(type_):
                plans[possible.name] = self._subplan(possible, details)
                origin = self._origin(possible)
                if origin is not None:
                    by_class[origin] = possible.name
            return Abstract(type_, plans, by_class)
        raise Unsupported(f"fields of type {type_}")

    def _subplan(self, type_: GraphQLObjectType, details: list[FieldDetails]) -> ObjectPlan:
        grouped, defers, _ = collect_subfields(
            self.schema, self.fragments, self.variables, self.operation, type_, details
        )
        if defers:
            raise Unsupported("@defer")
        return self._object_plan(type_, grouped)


def _plain(type_: GraphQLObjectType, field: FieldPlan) -> Plain:
    """How the fill function answers the field (fill.py); a mere placeholder unless it is
    __typename or an attribute of a leaf, or of an object or list of objects of plain
    fields only."""
    if field.typename:
        return Plain(field.key, typename=type_.name)
    completion, name = field.completion, field.attribute or field.answer_attribute
    if name is None:
        return Plain(field.key)
    nullable = not isinstance(completion, NonNull)
    if isinstance(completion, NonNull):
        completion = completion.inner
    if isinstance(completion, Leaf):
        if completion.exact is not None:
            return Plain(field.key, name, nullable, exact=completion.exact)
        return Plain(field.key, name, nullable, coerce=completion.scalar.coerce_output_value)
    is_list = isinstance(completion, ListOf)
    if isinstance(completion, ListOf):
        completion = completion.inner
        if isinstance(completion, NonNull):
            completion = completion.inner
    if not isinstance(completion, Object):
        return Plain(field.key)
    whole = completion.plan.whole
    if whole is None:
        return Plain(field.key)
    inner, inner_class = whole
    return Plain(field.key, name, nullable, inner=inner, inner_class=inner_class, is_list=is_list)


def _is_leaf(completion: Completion) -> bool:
    """A scalar or enum, maybe non-null; a list (even of scalars) needs a path for its
    items' errors."""
    while isinstance(completion, NonNull):
        completion = completion.inner
    return isinstance(completion, Leaf)


def whole_items(completion: Completion) -> tuple[Fill | None, type | None]:
    """The fill function of a list's items when it answers them whole, filled without a
    path or place each, and the class an item must be of to be filled so (None: any)."""
    if type(completion) is NonNull:
        completion = completion.inner
    if type(completion) is not Object:
        return None, None
    return completion.plan.whole or (None, None)

"""An operation compiled into plans: per object type and selection, the fields to fill, each
with what gives its value (an attribute, or the Strawberry resolver called directly) and how
its value completes (leaf, list, object, interface). Fields are collected as the executor
collects them (fragments, @skip/@include, merged fields), so a plan holds for every request
giving the same values to the operation's @skip/@include variables, and is kept for them."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, cast

from graphql import (
    FieldNode,
    GraphQLBoolean,
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
    Node,
    OperationDefinitionNode,
    OperationType,
    VariableNode,
)
from graphql.execution.collect_fields import (
    FieldDetails,
    FragmentDetails,
    collect_fields,
    collect_subfields,
)
from graphql.execution.values import VariableValues
from strawberry.types.field import StrawberryField

from server.graphql.answers import ANSWERED_BY
from server.graphql.compiled.fill import Fill, Plain, compile_fill
from server.graphql.compiled.inputs import ConvertArguments, compile_arguments, plain_arguments

_BACKREF = "strawberry-definition"


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
    interface: GraphQLInterfaceType
    plans: dict[str, ObjectPlan]
    """A plan per possible object type, by name."""
    by_class: dict[type, str]
    """The object type name of each Strawberry class implementing the interface."""


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
    """A field without a resolver: the source's attribute of this name."""
    answer_attribute: str | None = None
    """A leaf field with a resolver: the source's attribute holding its answer, when it
    holds a plain value (server/graphql/answers.py); the fill function reads it."""
    strawberry: StrawberryField | None = None
    resolver: Callable[..., Any] | None = None
    pass_self: bool = False
    info_name: str | None = None
    source_names: tuple[str, ...] = ()
    """Keyword parameters (strawberry.Parent, root) given the source object."""
    takes_arguments: bool = False
    plain_arguments: dict[str, str] | None = None
    """GraphQL to Python names of the arguments when its resolver takes each as graphql-core
    gives it (a scalar or enum): None when Strawberry converts them."""
    literal_arguments: bool = False
    """Its arguments are literals (or defaults): they convert the same for every request."""
    fixed_arguments: dict[str, Any] | None = None
    """Plain literal arguments, once converted."""
    convert_arguments: ConvertArguments | None = None
    """Converts other arguments as Strawberry would (inputs.py); None: Strawberry does."""


@dataclass(eq=False, slots=True)
class ObjectPlan:
    object_type: GraphQLObjectType
    fields: list[FieldPlan]
    is_type_of: Callable[[Any, Any], Any] | None
    origin: type | None = None
    """The Strawberry class of the type: its instances need no is_type_of check."""
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
        definition = type_.extensions.get(_BACKREF)
        if definition is None:
            raise Unsupported(f"{type_.name} is no Strawberry type")
        fields = [self._field_plan(type_, key, details) for key, details in grouped.items()]
        origin = getattr(definition, "origin", None)
        plains = [_plain(type_, field) for field in fields]
        fill = compile_fill(plains)
        rest = [f for f, plain in zip(fields, plains, strict=True) if not (fill and plain.inline)]
        return ObjectPlan(
            type_,
            fields,
            type_.is_type_of,
            origin if isinstance(origin, type) else None,
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
        strawberry_field = definition.extensions.get(_BACKREF)
        if not isinstance(strawberry_field, StrawberryField) or strawberry_field.extensions:
            raise Unsupported(f"{parent.name}.{name} is not a plain Strawberry field")
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
            strawberry=strawberry_field,
            takes_arguments=bool(definition.args or nodes[0].arguments),
        )
        resolver = strawberry_field.base_resolver
        if resolver is None:
            plan.attribute = strawberry_field.python_name
            return plan
        if plan.takes_arguments:
            plan.plain_arguments = plain_arguments(strawberry_field, self.schema)
            if plan.plain_arguments is None:
                plan.convert_arguments = compile_arguments(strawberry_field, self.schema)
            plan.literal_arguments = not any(
                isinstance(argument.value, VariableNode) for argument in nodes[0].arguments or ()
            )
        if plan.leaf and not plan.takes_arguments:
            plan.answer_attribute = strawberry_field.metadata.get(ANSWERED_BY)
        plan.resolver = cast(Callable[..., Any], resolver.wrapped_func)
        plan.pass_self = resolver.self_parameter is not None
        plan.info_name = resolver.info_parameter.name if resolver.info_parameter else None
        plan.source_names = tuple(
            p.name for p in (resolver.parent_parameter, resolver.root_parameter) if p is not None
        )
        return plan

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
        if isinstance(type_, GraphQLInterfaceType):
            plans: dict[str, ObjectPlan] = {}
            by_class: dict[type, str] = {}
            for possible in self.schema.get_possible_types(type_):
                plans[possible.name] = self._subplan(possible, details)
                origin = getattr(possible.extensions.get(_BACKREF), "origin", None)
                if isinstance(origin, type):
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


def directive_variables(
    operation: OperationDefinitionNode, fragments: dict[str, FragmentDetails]
) -> tuple[str, ...]:
    """The variables the operation's @skip/@include directives (and its fragments') read."""
    found: set[str] = set()
    roots: list[Node] = [operation, *(details.definition for details in fragments.values())]
    for root in roots:
        for node in _walk(root):
            directives = getattr(node, "directives", None) or ()
            for directive in directives:
                for argument in directive.arguments:
                    if isinstance(argument.value, VariableNode):
                        found.add(argument.value.name.value)
    return tuple(sorted(found))


def _walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        selection_set = getattr(current, "selection_set", None)
        if selection_set is not None:
            stack.extend(selection_set.selections)


def whole_items(completion: Completion) -> tuple[Fill | None, type | None]:
    """The fill function of a list's items when it answers them whole, filled without a
    path or place each, and the class an item must be of to be filled so (None: any)."""
    if type(completion) is NonNull:
        completion = completion.inner
    if type(completion) is not Object:
        return None, None
    return completion.plan.whole or (None, None)

"""Extensions bound into a package's schema: their SDL added with graphql-core's
extend_schema, then each field they add resolved by its declaration (extension.py), its
cost bound noted as a generated field's (cost.py), its guard asked before its resolver; a
Subscription field subscribed to what it follows (follows.py). Every problem is found as
the schema is built, each naming its `Type.field`: a field with no resolver, a list of
objects with no bound, a field with no guard, a subscription following nothing the spec
has, a declaration naming no field of the SDL."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from graphql import (
    DocumentNode,
    GraphQLArgument,
    GraphQLError,
    GraphQLField,
    GraphQLInputObjectType,
    GraphQLList,
    GraphQLNamedType,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLResolveInfo,
    GraphQLSchema,
    InputObjectTypeDefinitionNode,
    ObjectTypeDefinitionNode,
    ObjectTypeExtensionNode,
    extend_schema,
    get_named_type,
    is_leaf_type,
    parse,
)

from keygraph.execution.plan import ORIGIN
from keygraph.page import Page

from . import ahead
from .answers import CONNECTION_FIELDS, bind_connection, connection
from .bindings import Watch
from .cost import Read, reads
from .extension import Declared, Extension
from .follows import subscribed
from .guards import Check, guard_check, snake

Finish = Callable[[Any, dict[str, Any]], Any]
"""What a resolver's answer becomes, given the arguments it was called with."""


def extend(
    schema: GraphQLSchema,
    extensions: Sequence[Extension],
    authz: ModuleType | None,
    watches: Mapping[str, Watch] | None = None,
) -> GraphQLSchema:
    """The schema with each extension's SDL and fields; `authz`, the package's guards, is
    where a guard named by its pattern is found, `watches` (the package's, by name) what a
    Subscription field may follow. ValueError naming every problem."""
    for extension in extensions:
        schema = _extended(schema, extension, _Package(authz, watches or {}))
    return schema


@dataclass(frozen=True, slots=True)
class _Package:
    """What an extension's fields find in the package: its guards and its watches."""

    authz: ModuleType | None
    watches: Mapping[str, Watch]


@dataclass(frozen=True, slots=True)
class _Added:
    """The fields an extension's SDL adds, by `Type.field`; the types it makes."""

    fields: dict[str, tuple[str, str]]
    types: frozenset[str]


def _added(document: DocumentNode) -> _Added:
    fields: dict[str, tuple[str, str]] = {}
    types: set[str] = set()
    for definition in document.definitions:
        if isinstance(definition, ObjectTypeDefinitionNode | ObjectTypeExtensionNode):
            name = definition.name.value
            if isinstance(definition, ObjectTypeDefinitionNode):
                types.add(name)
            for field in definition.fields or ():
                fields[f"{name}.{field.name.value}"] = (name, field.name.value)
    return _Added(fields, frozenset(types))


def _extended(schema: GraphQLSchema, extension: Extension, package: _Package) -> GraphQLSchema:
    try:
        document = _with_roots(parse(extension.sdl), schema)
        added = _added(document)
        extended = extend_schema(schema, document)
    except (GraphQLError, TypeError) as exc:
        raise ValueError(f"the extension's SDL: {exc}") from None
    problems = [
        f"{coordinate}: declared, but the extension's SDL adds no such field"
        for coordinate in sorted(set(extension.declared) - set(added.fields))
    ]
    for coordinate, (type_name, field_name) in added.fields.items():
        owner = extended.type_map[type_name]
        assert isinstance(owner, GraphQLObjectType)
        field = owner.fields[field_name]
        for argument_name, argument in field.args.items():
            argument.out_name = snake(argument_name)
        declared = extension.declared.get(coordinate)
        root = owner is extended.subscription_type
        if declared is not None and root:
            problems += subscribed(
                coordinate, owner, field, declared, package.authz, package.watches
            )
        elif declared is not None:
            mutation = owner is extended.mutation_type
            problems += _bind(coordinate, owner, field, declared, package.authz, mutation)
        elif type_name in added.types and not root and _plain(field):
            field.resolve = _value(snake(field_name), _maker(get_named_type(field.type)))
        else:
            problems.append(f"{coordinate}: no resolver (declare it with Extension.field)")
    if problems:
        raise ValueError("the extension cannot be served:\n  " + "\n  ".join(problems))
    for definition in document.definitions:
        if isinstance(definition, InputObjectTypeDefinitionNode):
            given = extended.type_map[definition.name.value]
            assert isinstance(given, GraphQLInputObjectType)
            for name, input_field in given.fields.items():
                input_field.out_name = snake(name)
    return extended


def _with_roots(document: DocumentNode, schema: GraphQLSchema) -> DocumentNode:
    """The document, where it adds to a Mutation or Subscription type the schema lacks: its
    first `extend type` of the root defines it, and the schema's root is it."""
    definitions = list(document.definitions)
    roots = []
    for root, given in (
        ("Mutation", schema.mutation_type),
        ("Subscription", schema.subscription_type),
    ):
        if given is not None:
            continue
        for at, definition in enumerate(definitions):
            name = getattr(definition, "name", None)
            if name is None or name.value != root:
                continue
            if isinstance(definition, ObjectTypeExtensionNode):
                definitions[at] = ObjectTypeDefinitionNode(
                    name=definition.name,
                    interfaces=definition.interfaces,
                    directives=definition.directives,
                    fields=definition.fields,
                )
            if isinstance(definition, ObjectTypeDefinitionNode | ObjectTypeExtensionNode):
                roots.append(f"{root.lower()}: {root}")
                break
    if not roots:
        return document
    schema_roots = parse(f"extend schema {{ {' '.join(roots)} }}").definitions
    return DocumentNode(definitions=(*definitions, *schema_roots))


def _plain(field: GraphQLField) -> bool:
    """A field of a new type its source's value answers: no arguments, and no list of
    objects nor connection (whose bound a declaration gives)."""
    named = get_named_type(field.type)
    if field.args or _is_connection(named):
        return False
    return is_leaf_type(named) or not _is_list(field)


def _is_list(field: GraphQLField) -> bool:
    kind = field.type
    while isinstance(kind, GraphQLNonNull | GraphQLList):
        if isinstance(kind, GraphQLList):
            return True
        kind = kind.of_type
    return False


def _is_connection(named: GraphQLNamedType) -> bool:
    return isinstance(named, GraphQLObjectType) and {"edges", "pageInfo"} <= set(named.fields)


def _bind(
    coordinate: str,
    owner: GraphQLObjectType,
    field: GraphQLField,
    declared: Declared,
    authz: ModuleType | None,
    mutation: bool,
) -> list[str]:
    """Resolves the field by its declaration; the problems that keep it from being served."""
    problems: list[str] = []
    if declared.follows:
        problems.append(f"{coordinate}: follows is for a Subscription field")
    if declared.ahead is not None and (owner.extensions or {}).get(ORIGIN) is None:
        problems.append(f"{coordinate}: ahead is for a field of a generated type")
    check = guard_check(coordinate, owner, field, declared, authz, problems)
    named = get_named_type(field.type)
    read, finish = _cost(coordinate, field, named, declared, problems)
    if problems:
        return problems
    if read is not None:
        reads(field, read)
    resolve = _resolver(declared, check, finish)
    field.resolve = _forgetting(resolve) if mutation else resolve
    if declared.ahead is not None:
        ahead.declare(owner, coordinate.split(".")[1], declared.ahead)
    return []


def _cost(
    coordinate: str,
    field: GraphQLField,
    named: GraphQLNamedType,
    declared: Declared,
    problems: list[str],
) -> tuple[Read | None, Finish]:
    """What the field reads for the cost, and what its resolver's answer becomes: models of
    its type from dicts, a connection from a page; a list over its bound refused."""
    most, page = declared.most, declared.page
    bounded = most is not None or page is not None
    objects = not is_leaf_type(named)
    make = _maker(named)
    if most is not None and page is not None:
        problems.append(f"{coordinate}: both most and page; give one bound")
    elif bounded and not (objects and (_is_list(field) or _is_connection(named))):
        problems.append(f"{coordinate}: a bound counts only a list of objects or a connection")
    elif page is not None and not _takes_first(field):
        problems.append(f"{coordinate}: a page is sized by a `first: Int` argument it lacks")
    if _is_connection(named):
        assert isinstance(named, GraphQLObjectType)
        if page is None:
            problems.append(f"{coordinate}: a connection with no bound (give page=PageSize)")
        elif not _connection_fields(named):
            problems.append(f"{coordinate}: {named.name} is not a Relay connection")
        else:
            bind_connection(field)
        return Read("query", page), _paged(coordinate)
    if objects and _is_list(field):
        if not bounded:
            problems.append(f"{coordinate}: a list with no bound (give most=N or page=...)")
        return Read("batch_get", page, most), _listed(coordinate, most, make)
    if objects:
        return Read("get"), _made(make)
    return None, _made(None)


def _maker(named: GraphQLNamedType) -> Callable[[Any], Any] | None:
    """What makes a generated type's model of a dict of its attributes; None for another
    type."""
    model = (named.extensions or {}).get(ORIGIN) if isinstance(named, GraphQLObjectType) else None
    make: Callable[[Any], Any] | None = getattr(model, "model_validate", None)
    return make


def _takes_first(field: GraphQLField) -> bool:
    first = field.args.get("first")
    return isinstance(first, GraphQLArgument) and get_named_type(first.type).name == "Int"


def _connection_fields(connection_type: GraphQLObjectType) -> bool:
    """Whether the type, its edges and their PageInfo hold only what `connection` answers."""
    edges = get_named_type(connection_type.fields["edges"].type)
    info = get_named_type(connection_type.fields["pageInfo"].type)
    kinds = (connection_type, edges, info)
    known = set(CONNECTION_FIELDS)
    return all(isinstance(t, GraphQLObjectType) and set(t.fields) <= known for t in kinds)


def _made(make: Callable[[Any], Any] | None) -> Finish:
    """A dict answered for a generated type made its model; anything else as it is."""

    def finish(value: Any, _given: dict[str, Any]) -> Any:
        return make(value) if make is not None and isinstance(value, dict) else value

    return finish


def _listed(coordinate: str, most: int | None, make: Callable[[Any], Any] | None) -> Finish:
    """A list, refused over its bound (`most`, or the `first` it was given); each dict
    made a model of a generated type."""

    def finish(value: Any, given: dict[str, Any]) -> Any:
        if value is None:
            return None
        items = list(value)
        bound = most if most is not None else given["first"]
        if len(items) > bound:
            raise ValueError(f"{coordinate} answered {len(items)} items, over its {bound}")
        if make is None:
            return items
        return [make(item) if isinstance(item, dict) else item for item in items]

    return finish


def _paged(coordinate: str) -> Finish:
    """A page as a connection, refused when it holds more than the `first` it was given."""

    def finish(value: Any, given: dict[str, Any]) -> Any:
        if value is None:
            return None
        if not isinstance(value, Page):
            raise TypeError(f"{coordinate} answers a connection from a keygraph Page")
        if len(value.items) > given["first"]:
            raise ValueError(f"{coordinate} answered a page over its first: {given['first']}")
        return connection(value)

    return finish


def _resolver(declared: Declared, check: Check, finish: Finish) -> Callable[..., Any]:
    """The field's resolver: its guard asked first, its `first` checked against its page,
    then the declared resolver, whose answer `finish` makes. A coroutine function is called
    only once its field is awaited: a field abandoned before (below a nulled place) leaves
    no coroutine of it never awaited."""
    page, answer = declared.page, declared.resolver
    deferred = inspect.iscoroutinefunction(answer)

    def resolve(source: Any, info: GraphQLResolveInfo[Any], **given: Any) -> Any:
        check(source, info, given)
        if page is not None:
            given["first"] = page.size(given.get("first"))
        if deferred:
            return _called(answer, source, info, given, finish)
        value = answer(source, info, **given)
        if inspect.isawaitable(value):
            return _finished(value, finish, given)
        return finish(value, given)

    return resolve


def _forgetting(resolve: Callable[..., Any]) -> Callable[..., Any]:
    """A mutation's resolver: the request's reads are forgotten before it and again once it
    answers, so that its payload, and each field after it, reads what it wrote afresh."""

    def mutate(source: Any, info: GraphQLResolveInfo[Any], **given: Any) -> Any:
        info.context.loads.forget()
        value = resolve(source, info, **given)
        if inspect.isawaitable(value):
            return _forgotten(value, info)
        info.context.loads.forget()
        return value

    return mutate


async def _forgotten(value: Awaitable[Any], info: GraphQLResolveInfo[Any]) -> Any:
    answer = await value
    info.context.loads.forget()
    return answer


async def _called(
    answer: Callable[..., Any], source: Any, info: Any, given: dict[str, Any], finish: Finish
) -> Any:
    return finish(await answer(source, info, **given), given)


async def _finished(value: Any, finish: Finish, given: dict[str, Any]) -> Any:
    return finish(await value, given)


def _value(name: str, make: Callable[[Any], Any] | None) -> Callable[..., Any]:
    """Answers a field of a new type with its source's key (a dict's) or attribute, a dict
    made a model of a generated type."""

    def resolve(source: Any, _info: GraphQLResolveInfo[Any]) -> Any:
        value = source[name] if isinstance(source, dict) else getattr(source, name)
        return make(value) if make is not None and isinstance(value, dict) else value

    return resolve

"""Extensions bound into a package's schema: their SDL added with graphql-core's
extend_schema, then each field they add resolved by its declaration (extension.py), its
cost bound noted as a generated field's (cost.py), its guard asked before its resolver.
Every problem is found as the schema is built, each naming its `Type.field`: a field with
no resolver, a list of objects with no bound, a field with no guard, a declaration naming
no field of the SDL."""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Sequence
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

from keygraph.errors import Forbidden
from keygraph.execution.plan import ORIGIN
from keygraph.page import Page

from .answers import CONNECTION_FIELDS, bind_connection, connection
from .cost import Read, reads
from .extension import Declared, Extension, GuardFunction

_CAMEL_BOUNDARY = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
Finish = Callable[[Any, dict[str, Any]], Any]
"""What a resolver's answer becomes, given the arguments it was called with."""


def snake(name: str) -> str:
    """wordCount -> word_count: the name a field's argument is given to its resolver by."""
    return _CAMEL_BOUNDARY.sub("_", name).lower()


def extend(
    schema: GraphQLSchema, extensions: Sequence[Extension], authz: ModuleType | None
) -> GraphQLSchema:
    """The schema with each extension's SDL and fields; `authz`, the package's guards, is
    where a guard named by its pattern is found. ValueError naming every problem."""
    for extension in extensions:
        schema = _extended(schema, extension, authz)
    return schema


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


def _extended(
    schema: GraphQLSchema, extension: Extension, authz: ModuleType | None
) -> GraphQLSchema:
    try:
        document = parse(extension.sdl)
        if schema.mutation_type is None:
            document = _with_mutation(document)
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
        if owner is extended.subscription_type:
            problems.append(f"{coordinate}: subscriptions are the spec's alone")
        elif declared is not None:
            problems += _bind(coordinate, owner, field, declared, authz)
        elif type_name in added.types and _plain(field):
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


def _with_mutation(document: DocumentNode) -> DocumentNode:
    """The document, for a schema with no Mutation type: its first `extend type Mutation`
    defines the type, and the schema's mutations are it."""
    definitions = list(document.definitions)
    for at, definition in enumerate(definitions):
        if isinstance(definition, ObjectTypeDefinitionNode) and definition.name.value == "Mutation":
            break
        if isinstance(definition, ObjectTypeExtensionNode) and definition.name.value == "Mutation":
            definitions[at] = ObjectTypeDefinitionNode(
                name=definition.name,
                interfaces=definition.interfaces,
                directives=definition.directives,
                fields=definition.fields,
            )
            break
    else:
        return document
    mutation = parse("extend schema { mutation: Mutation }").definitions
    return DocumentNode(definitions=(*definitions, *mutation))


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
) -> list[str]:
    """Resolves the field by its declaration; the problems that keep it from being served."""
    problems: list[str] = []
    guard = _guard(coordinate, declared, authz, problems)
    named = get_named_type(field.type)
    read, finish = _cost(coordinate, field, named, declared, problems)
    owners: tuple[tuple[str, bool], ...] = ()
    if guard is not None:
        owners = _owners(coordinate, guard, owner, field, problems)
    if problems:
        return problems
    if read is not None:
        reads(field, read)
    field.resolve = _resolver(coordinate, declared, guard, owners, finish)
    return []


def _guard(
    coordinate: str, declared: Declared, authz: ModuleType | None, problems: list[str]
) -> GuardFunction | None:
    """The function deciding who may ask the field (None: anyone, when it is public)."""
    guard = declared.guard
    if declared.public:
        if guard is not None:
            problems.append(f"{coordinate}: both a guard and public=True")
        return None
    if guard is None:
        problems.append(f"{coordinate}: no guard (give guard=... or public=True)")
        return None
    if not isinstance(guard, str):
        return guard
    found = None if authz is None else getattr(authz, f"may_run_{guard}", None)
    if found is None:
        problems.append(f"{coordinate}: guard {guard!r} names no pattern of the spec")
    return found


def _owners(
    coordinate: str,
    guard: GuardFunction,
    owner: GraphQLObjectType,
    field: GraphQLField,
    problems: list[str],
) -> tuple[tuple[str, bool], ...]:
    """What the guard is asked with after the caller: each name it takes, and whether the
    field's arguments give it (else the parent's attribute does)."""
    arguments = {snake(name) for name in field.args}
    model = (owner.extensions or {}).get(ORIGIN)
    attributes = set(getattr(model, "model_fields", ()))
    names: list[tuple[str, bool]] = []
    for parameter in list(inspect.signature(guard).parameters.values())[1:]:
        if parameter.kind is parameter.VAR_KEYWORD:
            names += [(name, True) for name in sorted(arguments)]
        elif parameter.name in arguments or parameter.name in attributes:
            names.append((parameter.name, parameter.name in arguments))
        elif parameter.default is parameter.empty:
            message = f"{coordinate}: its guard takes {parameter.name}, which is neither an "
            problems.append(message + f"argument nor an attribute of {owner.name}")
    return tuple(names)


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


def _resolver(
    coordinate: str,
    declared: Declared,
    guard: GuardFunction | None,
    owners: tuple[tuple[str, bool], ...],
    finish: Finish,
) -> Callable[..., Any]:
    """The field's resolver: its guard asked first (a refusal is FORBIDDEN), its `first`
    checked against its page, then the declared resolver, whose answer `finish` makes."""
    page, answer = declared.page, declared.resolver

    def resolve(source: Any, info: GraphQLResolveInfo[Any], **given: Any) -> Any:
        caller = info.context.session.caller
        if guard is not None and caller is not None:
            asked = {
                name: given.get(name) if argument else getattr(source, name)
                for name, argument in owners
            }
            if not guard(caller, **asked):
                raise Forbidden(f"not allowed to ask {coordinate}")
        if page is not None:
            given["first"] = page.size(given.get("first"))
        value = answer(source, info, **given)
        if inspect.isawaitable(value):
            return _finished(value, finish, given)
        return finish(value, given)

    return resolve


async def _finished(value: Any, finish: Finish, given: dict[str, Any]) -> Any:
    return finish(await value, given)


def _value(name: str, make: Callable[[Any], Any] | None) -> Callable[..., Any]:
    """Answers a field of a new type with its source's key (a dict's) or attribute, a dict
    made a model of a generated type."""

    def resolve(source: Any, _info: GraphQLResolveInfo[Any]) -> Any:
        value = source[name] if isinstance(source, dict) else getattr(source, name)
        return make(value) if make is not None and isinstance(value, dict) else value

    return resolve

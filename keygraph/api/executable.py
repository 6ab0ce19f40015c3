"""A generated package's API made executable: its api.graphql built with graphql-core, and a
resolver on each field its `api.py` binds. A root field calls its generated function with
the caller's tenant (never an argument) and session, so the function's guard decides before
any store call; a query answers a Relay connection of its page; a relation follows its
pattern from the parent, batched (relations.py); `node` reads the type its global id names
with that type's get. A get by key first reads ahead what the fields selected below it
declare (ahead.py)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

from graphql import (
    GraphQLEnumType,
    GraphQLInterfaceType,
    GraphQLObjectType,
    GraphQLResolveInfo,
    GraphQLSchema,
    GraphQLUnionType,
    build_schema,
    get_named_type,
)

from keygraph.errors import Forbidden
from keygraph.execution.parts import Stream
from keygraph.execution.plan import BATCH, ORIGIN
from keygraph.store import Session

from . import scalars
from .ahead import read_ahead
from .answers import answer_with, arguments, bind_connection, connection, converted
from .bindings import Api, Arg, Guard, Root, Type
from .cost import Read, reads
from .extend import extend
from .extension import Extension
from .ids import global_id, id_part, key_values, parse_global_id
from .loads import Loads
from .mutations import bind_mutations
from .relations import batch, resolver
from .remembered import Remembering
from .watches import Realtime, bind_subscriptions

Info = GraphQLResolveInfo[Any]


async def unheard(_error: dict[str, Any]) -> None:
    """Where a notice goes with no subscription's client to hear it."""


@dataclass(frozen=True, slots=True)
class ApiContext:
    """What every resolver reads: the caller's session and tenant (from its token), the
    request's batched loads, and for a subscription the stream's hub and how to tell its
    client what is no event."""

    session: Session
    tenant: str
    loads: Loads = field(default_factory=Loads, compare=False, repr=False)
    realtime: Realtime | None = field(default=None, compare=False, repr=False)
    """The change stream's hub and cursors, for subscriptions (over WebSocket only)."""
    notify: Callable[[dict[str, Any]], Awaitable[None]] = field(
        default=unheard, compare=False, repr=False
    )
    """Sends a subscription's client a `next` carrying this error and no data."""
    started: Callable[[], None] = field(default=lambda: None, compare=False, repr=False)
    """Called as a subscription's feed opens: what is written after it reaches it."""
    stream: Stream | None = field(default=None, compare=False, repr=False)
    """The answer's parts when it is read and sent in parts (keygraph/serve/parted.py);
    None: in one piece."""

    def forget(self) -> None:
        """Drops what the request read so far: a part's, once in the answer."""
        self.loads.forget()
        if isinstance(self.session.store, Remembering):
            self.session.store.forget()


def executable(
    api: Api, extensions: Sequence[Extension] = (), authz: ModuleType | None = None
) -> GraphQLSchema:
    """The package's schema with every bound field resolved, and the fields `extensions`
    add (their guards named by pattern found in `authz`, the package's); ValueError, at
    once, for a field nothing answers or an extension's field missing what it needs."""
    schema = build_schema(api.sdl, assume_valid_sdl=True)  # codegen checked it
    scalars.install(schema)
    for name, enum in api.enums.items():
        gql = schema.type_map[name]
        assert isinstance(gql, GraphQLEnumType)
        for member in enum:
            gql.values[member.name].value = member
    for name, binding in api.types.items():
        _bind_type(schema, name, binding)
    query = schema.query_type
    assert query is not None
    unbound = sorted(set(query.fields) - set(api.roots) - {"node"})
    if unbound:
        raise ValueError(f"root fields with nothing to answer them: {', '.join(unbound)}")
    for name, root in api.roots.items():
        reads(query.fields[name], Read(root.operation, root.page)).resolve = _root(root, api)
        if root.operation == "query" and not root.listed:
            bind_connection(query.fields[name])
    if "node" in query.fields:
        reads(query.fields["node"], Read("get")).resolve = _node(api)
    bind_mutations(schema, api)
    bind_subscriptions(schema, api)
    shown = {model: name for name, t in api.types.items() for model in (t.model, *t.copies)}
    for gql in schema.type_map.values():
        if isinstance(gql, GraphQLUnionType | GraphQLInterfaceType):
            gql.resolve_type = _type_name(shown)
    return extend(schema, extensions, authz, api.watches)


def _bind_type(schema: GraphQLSchema, name: str, binding: Type) -> None:
    gql = schema.type_map[name]
    assert isinstance(gql, GraphQLObjectType)
    gql.extensions = {**(gql.extensions or {}), ORIGIN: binding.model}
    node = binding.get is not None
    bound = set(binding.fields) | set(binding.relations) | ({"id"} if node else set())
    unbound = sorted(set(gql.fields) - bound)
    if unbound:
        raise ValueError(f"fields of {name} with nothing to answer them: {', '.join(unbound)}")
    for field_name, attribute in binding.fields.items():
        guard = binding.guards.get(field_name)
        if guard is None:
            answer_with(gql.fields[field_name], attribute)
        else:
            gql.fields[field_name].resolve = _guarded(attribute, guard)
    for field_name, relation in binding.relations.items():
        read = Read(relation.operation, relation.page, relation.most)
        many = batch(relation)
        definition = reads(gql.fields[field_name], read)
        definition.resolve = resolver(many)
        definition.extensions = {**definition.extensions, BATCH: many}
        if relation.operation == "query" and not relation.listed:
            bind_connection(gql.fields[field_name])
    if node:
        gql.fields["id"].resolve = _id_of(name, binding.node)


def _type_name(shown: dict[type, str]) -> Callable[..., str]:
    """An abstract type's resolver: the type a value's model shows as."""

    def resolve(value: Any, _info: Info, _type: Any) -> str:
        kind = type(value)
        return shown.get(kind) or kind.__name__

    return resolve


def _guarded(attribute: str, guard: Guard) -> Callable[..., Any]:
    """The attribute, once its guard lets the caller read it: else null with FORBIDDEN."""

    def resolve(source: Any, info: Info) -> Any:
        caller = info.context.session.caller
        if caller is not None:
            owners = {owner: getattr(source, owner) for owner in guard.owners}
            if not guard.function(caller, **owners):
                raise Forbidden(f"not allowed to read {attribute}")
        return getattr(source, attribute)

    return resolve


def _id_of(name: str, parts: tuple[Arg, ...]) -> Callable[..., Any]:
    def resolve(source: Any, _info: Info) -> str:
        return global_id(name, [getattr(source, part.param) for part in parts])

    def joined(source: Any, _info: Info) -> str:
        return global_id(name, [id_part(part, getattr(source, part.param)) for part in parts])

    return joined if any(part.separator is not None for part in parts) else resolve


def _root(root: Root, api: Api) -> Callable[..., Any]:
    """A root field's resolver: its function's read, which loads asked meanwhile wait for."""
    if root.by_id is not None:
        return _by_id(root, root.by_id, api)

    async def resolve(_source: Any, info: Info, **given: Any) -> Any:
        ctx: ApiContext = info.context
        scope = (ctx.tenant,) if root.scoped else ()
        if root.operation == "get":
            key = arguments(root.args, given)
            await read_ahead(ctx, info, get_named_type(info.return_type), key)
            return await ctx.loads.read(root.function(ctx.session, *scope, **key))
        if root.operation == "batch_get":
            call = root.function(ctx.session, *scope, _refs(root.args, given))
            return await ctx.loads.read(call)
        call = root.function(
            ctx.session,
            *scope,
            **arguments(root.args, given),
            first=given.get("first"),
            after=given.get("after"),
        )
        page = await ctx.loads.read(call)
        return page.items if root.listed else connection(page)

    return resolve


def _by_id(root: Root, type_name: str, api: Api) -> Callable[..., Any]:
    """A get by its type's global id: null for another type's id, as `node` answers."""
    params = [arg.param for arg in root.args]

    async def resolve(_source: Any, info: Info, id: str) -> Any:
        ctx: ApiContext = info.context
        named, parts = parse_global_id(id)
        if named != type_name:
            return None
        key = dict(zip(params, key_values(root.args, parts, api.enums), strict=True))
        scope = (ctx.tenant,) if root.scoped else ()
        await read_ahead(ctx, info, info.schema.type_map.get(type_name), key)
        return await ctx.loads.read(root.function(ctx.session, *scope, **key))

    return resolve


def _refs(parts: tuple[Arg, ...], given: dict[str, Any]) -> list[Any]:
    """A batch get's keys: values of its one part, or tuples of a compound key's parts."""
    if len(parts) == 1:
        (part,) = parts
        return [converted(part, value) for value in given[part.name + "s"]]
    return [tuple(converted(p, key[p.name]) for p in parts) for key in given["keys"]]


def _node(api: Api) -> Callable[..., Any]:
    async def resolve(_source: Any, info: Info, id: str) -> Any:
        ctx: ApiContext = info.context
        type_name, parts = parse_global_id(id)
        binding = api.types.get(type_name)
        if binding is None or binding.get is None:
            return None
        values = key_values(binding.node, parts, api.enums)
        scope = (ctx.tenant,) if binding.scoped else ()
        key = {part.param: value for part, value in zip(binding.node, values, strict=True)}
        await read_ahead(ctx, info, info.schema.type_map.get(type_name), key)
        return await ctx.loads.read(binding.get(ctx.session, *scope, *values))

    return resolve

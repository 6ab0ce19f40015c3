"""The Mutation fields of a generated package's API: createX, updateX and deleteX call
keygraph.writes with the caller's session and tenant, and answer the item in the entity's
payload. Their inputs arrive with the attributes' names (each input field's `out_name`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from graphql import GraphQLInputObjectType, GraphQLObjectType, GraphQLSchema

from keygraph import writes

from .bindings import Api
from .cost import READ, Read

EXPECTED = "expectedVersion"


def bind_mutations(schema: GraphQLSchema, api: Api) -> None:
    """Resolves each Mutation field by its entity's writes; ValueError for a field nothing
    writes."""
    mutation = schema.mutation_type
    if mutation is None:
        return
    bound: set[str] = set()
    for entity, w in api.writes.items():
        if entity in api.fieldless:
            continue
        for operation in sorted(w.operations):
            name = f"{operation}{entity}"
            field = mutation.fields.get(name)
            if field is None:
                raise ValueError(f"the API has no {name} for {entity}'s {operation}")
            _names(schema, api, f"{operation.capitalize()}{entity}Input", entity)
            payload = field.type.of_type if hasattr(field.type, "of_type") else field.type
            assert isinstance(payload, GraphQLObjectType)
            (shown,) = payload.fields
            field.resolve = _resolver(operation, shown, w)
            field.extensions = {**(field.extensions or {}), READ: Read("get")}
            bound.add(name)
    unbound = sorted(set(mutation.fields) - bound)
    if unbound:
        raise ValueError(f"mutations with nothing to write them: {', '.join(unbound)}")


def _names(schema: GraphQLSchema, api: Api, input_name: str, owner: str) -> None:
    """Gives each field of an input (and the structs' inputs in it) its attribute's name."""
    given = schema.type_map[input_name]
    assert isinstance(given, GraphQLInputObjectType)
    attributes = api.types[owner].fields
    for name, field in given.fields.items():
        field.out_name = "expected_version" if name == EXPECTED else attributes[name]
        inner = field.type
        while hasattr(inner, "of_type"):
            inner = inner.of_type
        if isinstance(inner, GraphQLInputObjectType) and inner.name.endswith("Input"):
            struct = inner.name.removesuffix("Input")
            if isinstance(schema.type_map.get(struct), GraphQLObjectType):
                _names(schema, api, inner.name, struct)


def _resolver(operation: str, shown: str, w: writes.Writes) -> Callable[..., Any]:
    """The field's write; the payload's one field (`shown`) holds the item."""

    async def resolve(_source: Any, info: Any, input: dict[str, Any]) -> dict[str, Any]:
        ctx = info.context
        ctx.loads.forget()  # what the request read before this write is read again after it
        values = dict(input)
        if operation == "create":
            item = await writes.create(ctx.session, ctx.tenant, w, values)
            return {shown: item}
        expected = values.pop("expected_version", None)
        key = {part: values.pop(part) for part in w.parts}
        if operation == "update":
            item = await writes.update(ctx.session, ctx.tenant, w, key, values, expected)
        else:
            item = await writes.delete(ctx.session, ctx.tenant, w, key, expected)
        return {shown: item}

    return resolve

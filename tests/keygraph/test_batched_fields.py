"""A field with a batch resolver (keygraph/execution, BATCH) is called once for the parents
of a wave, with its arguments, and answers as its resolver does parent by parent on
graphql-core's executor: each parent's value, null, or error at its own path; a parent
nulled by a sibling before the batch goes out is left out of it, one nulled while it is
out stays null."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from graphql import GraphQLObjectType, build_schema, graphql

from keygraph.execution.executor import CompiledExecutor
from keygraph.execution.plan import BATCH
from tests.keygraph.api.test_compiled_agree import IGNORE_GRAPHQL_CORE

SDL = """
type Query { parents: [Parent] }
type Parent { id: Int! child(scale: Int = 10): Child late: Int! early: Int! }
type Child { id: Int! }
"""
DOCUMENT = "{ parents { id child(scale: 3) { id } late early } }"


@dataclass
class Parent:
    id: int


@dataclass
class Child:
    id: int


def child_of(parent: Parent, scale: int) -> Child | Exception | None:
    """Parent 2 has no child; parent 3's fails; the others' is id * scale."""
    if parent.id == 2:
        return None
    if parent.id == 3:
        return ValueError("no child for 3")
    return Child(parent.id * scale)


def schema(batches: list[list[int]]) -> Any:
    built = build_schema(SDL)
    query, parent = built.type_map["Query"], built.type_map["Parent"]
    assert isinstance(query, GraphQLObjectType)
    assert isinstance(parent, GraphQLObjectType)

    async def parents(_source: Any, _info: Any) -> list[Parent]:
        return [Parent(n) for n in range(6)]

    async def child(source: Parent, _info: Any, scale: int) -> Any:
        found = child_of(source, scale)
        if isinstance(found, Exception):
            raise found
        return found

    late_failed = asyncio.Event()

    async def children(_ctx: Any, sources: list[Parent], scale: int) -> list[Any]:
        batches.append([source.id for source in sources])
        async with asyncio.timeout(5):  # parent 4's `late` fails meanwhile
            await late_failed.wait()
        return [child_of(source, scale) for source in sources]

    async def late(source: Parent, _info: Any) -> int:
        if source.id == 4:
            late_failed.set()
            raise ValueError("late fails for 4")
        return source.id

    def early(source: Parent, _info: Any) -> int:
        if source.id == 5:
            raise ValueError("early fails for 5")
        return source.id

    query.fields["parents"].resolve = parents
    parent.fields["child"].resolve = child
    parent.fields["child"].extensions = {BATCH: children}
    parent.fields["late"].resolve = late
    parent.fields["early"].resolve = early
    return built


async def answer(compiled: bool, batches: list[list[int]]) -> tuple[Any, list[Any]]:
    executor = CompiledExecutor if compiled else None
    result = await graphql(schema(batches), DOCUMENT, executor_class=executor)
    errors = sorted((error.formatted for error in result.errors or ()), key=str)
    return result.data, errors


@IGNORE_GRAPHQL_CORE
async def test_a_batched_field_answers_as_its_resolver_parent_by_parent() -> None:
    batches: list[list[int]] = []
    compiled = await answer(True, batches)
    assert batches == [[0, 1, 2, 3, 4]]  # 5 failed before the batch went out
    assert compiled == await answer(False, [])
    data, errors = compiled
    assert data == {
        "parents": [
            {"id": 0, "child": {"id": 0}, "late": 0, "early": 0},
            {"id": 1, "child": {"id": 3}, "late": 1, "early": 1},
            {"id": 2, "child": None, "late": 2, "early": 2},
            {"id": 3, "child": None, "late": 3, "early": 3},
            None,
            None,
        ]
    }
    assert [(error["message"], error["path"]) for error in errors] == [
        ("early fails for 5", ["parents", 5, "early"]),
        ("late fails for 4", ["parents", 4, "late"]),
        ("no child for 3", ["parents", 3, "child"]),
    ]

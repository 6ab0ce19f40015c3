"""Relay clients of a spec's generated API: for two generated schemas (this repository's
spec and the social case's), relay-compiler compiles a document with `@connection` on every
connection the schema has, root field or relation, and `@refetchable` on every Node type
that has one, written from the schema itself so a new connection is covered too. Skipped
with how to get relay-compiler when it is missing (a failure under CI)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from graphql import (
    GraphQLArgument,
    GraphQLEnumType,
    GraphQLField,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    build_schema,
    get_named_type,
)

from codegen import pipeline
from tests.keygraph.api.relay_compiler import relay_compiler

ROOT = Path(__file__).parents[3]
SPECS = {
    "repository": ROOT / "access_patterns.toml",
    "social": ROOT / "tests" / "codegen" / "cases" / "social" / "spec.toml",
}
PAGING = '@argumentDefinitions(count: {type: "Int", defaultValue: 5}, cursor: {type: "String"})'


def literal(kind: GraphQLInputType) -> str:
    """A value of an argument's type, as a literal."""
    inner = kind.of_type if isinstance(kind, GraphQLNonNull) else kind
    if isinstance(inner, GraphQLList):
        return f"[{literal(inner.of_type)}]"
    named = get_named_type(inner)
    if isinstance(named, GraphQLEnumType):
        return str(next(iter(named.values)))
    return {"Int": "1", "Long": "1", "Float": "1.5", "Boolean": "true"}.get(
        named.name, '"2026-01-01T00:00:00+00:00"' if named.name == "DateTime" else '"x"'
    )


def paged(name: str, field: GraphQLField, key: str) -> str:
    """The field as a Relay connection: its other required arguments given literally."""
    given = [
        f"{arg_name}: {literal(arg.type)}"
        for arg_name, arg in field.args.items()
        if arg_name not in ("first", "after") and _required(arg)
    ]
    args = ", ".join([*given, "first: $count", "after: $cursor"])
    return f'{name}({args}) @connection(key: "{key}") {{ edges {{ node {{ __typename }} }} }}'


def _required(arg: GraphQLArgument) -> bool:
    return isinstance(arg.type, GraphQLNonNull)


def documents(schema: GraphQLSchema) -> tuple[str, int]:
    """Fragments with a connection each, and how many connections they hold."""
    parts: list[str] = []
    spreads: list[str] = []
    count = 0
    owners: list[GraphQLObjectType] = [
        t
        for t in schema.type_map.values()
        if isinstance(t, GraphQLObjectType) and not t.name.startswith("__")
    ]
    for owner in owners:
        node = any(i.name == "Node" for i in owner.interfaces)
        if owner.name != "Query" and not node:
            continue
        for name, field in owner.fields.items():
            if not get_named_type(field.type).name.endswith("Connection"):
                continue
            count += 1
            fragment = f"{owner.name}{name[:1].upper()}{name[1:]}_{owner.name.lower()}"
            refetch = f'@refetchable(queryName: "{fragment}Query")' if node else ""
            body = paged(name, field, f"{fragment}_{name}")
            parts.append(f"fragment {fragment} on {owner.name} {refetch} {PAGING} {{ {body} }}")
            if owner.name == "Query":
                spreads.append(f"...{fragment}")
    parts.append(f"query AppQuery {{ {' '.join(spreads)} }}")
    return "\n\n".join(parts), count


@pytest.mark.parametrize("name", list(SPECS))
def test_relay_compiler_accepts_every_generated_connection(name: str, tmp_path: Path) -> None:
    compiler = relay_compiler()
    spec = SPECS[name]
    sdl = pipeline.generate(spec.read_text(encoding="utf-8"), spec.name, "served")["api.graphql"]
    text, count = documents(build_schema(sdl))
    assert count >= 3
    (tmp_path / "schema.graphql").write_text(sdl)
    (tmp_path / "src").mkdir()
    tagged = "".join(f"graphql`{d.strip()}\n`;\n" for d in text.split("\n\n"))
    (tmp_path / "src" / "documents.ts").write_text(tagged)
    config = {"src": "./src", "schema": str(tmp_path / "schema.graphql"), "language": "typescript"}
    (tmp_path / "relay.config.json").write_text(json.dumps(config))
    done = subprocess.run(
        [str(compiler)], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "src" / "__generated__" / "AppQuery.graphql.ts").exists()

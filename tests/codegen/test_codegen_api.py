"""The GraphQL API a spec's defaults give (api.graphql): for this repository's spec, every
valid golden case and the lint specs that compile, the SDL builds with graphql-core, every
pattern is a root field of its camelCase name with its key arguments (never the tenant) and
the shape its operation gives, and relay-compiler compiles `@connection` on every query
field of two of them. `keygraph schema` prints it."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from graphql import (
    GraphQLArgument,
    GraphQLList,
    GraphQLNonNull,
    GraphQLObjectType,
    GraphQLSchema,
    build_schema,
    get_named_type,
    print_ast,
)

from codegen import pipeline
from codegen.api_types import field_name
from codegen.cli import main as keygraph_main
from codegen.diagnostics import SpecErrors
from codegen.spec import Spec

ROOT = Path(__file__).parents[2]
CASES = Path(__file__).with_name("cases")
RELAY = ROOT / ".keygraph/relay/node_modules/.bin/relay-compiler"


def _compiles(spec: Path) -> bool:
    try:
        pipeline.analyse(spec.read_text(encoding="utf-8"), spec.name)
    except SpecErrors:
        return False  # a lint spec that is refused: no API to check
    return True


def _specs() -> list[Path]:
    found = [ROOT / "access_patterns.toml"]
    found += sorted(case / "spec.toml" for case in CASES.iterdir() if (case / "expected").is_dir())
    found += sorted(Path(__file__).with_name("lint_specs").glob("*.toml"))
    return [spec for spec in found if _compiles(spec)]


def _api(spec: Path) -> tuple[Spec, GraphQLSchema]:
    text = spec.read_text(encoding="utf-8")
    files = pipeline.generate(text, spec.name)
    return pipeline.analyse(text, spec.name).spec, build_schema(files["api.graphql"])


@pytest.mark.parametrize("spec", _specs(), ids=lambda p: p.parent.name + "/" + p.name)
def test_every_pattern_is_a_root_field_of_its_shape(spec: Path) -> None:
    parsed, schema = _api(spec)
    query = schema.query_type
    assert query is not None
    for name, pattern in parsed.patterns.items():
        if pattern.field is False:
            assert field_name(name) not in query.fields
            continue
        field = query.fields[pattern.field or field_name(name)]
        assert "tenant" not in field.args
        returned = field.type
        if pattern.operation == "get":
            assert isinstance(returned, GraphQLObjectType)
            assert returned.name == pattern.entity
            assert all(isinstance(arg.type, GraphQLNonNull) for arg in field.args.values())
            assert pattern.by == "key" or list(field.args) == ["id"]
        elif pattern.operation == "batch_get":  # nullable where its rule may refuse
            listed = returned.of_type if isinstance(returned, GraphQLNonNull) else returned
            assert isinstance(listed, GraphQLList)
            assert get_named_type(returned).name == pattern.entity
            (arg,) = field.args.values()
            assert isinstance(arg.type, GraphQLNonNull)
        elif pattern.list:  # nullable where its rule may refuse the caller
            assert str(returned).removesuffix("!") == f"[{pattern.returns[0]}!]"
            assert list(field.args)[-1:] == ["first"]
        else:
            connection = get_named_type(returned)
            assert connection.name.endswith("Connection")
            assert {"first", "after"} <= set(field.args)
            assert isinstance(connection, GraphQLObjectType)
            page_info = get_named_type(connection.fields["pageInfo"].type)
            assert isinstance(page_info, GraphQLObjectType)
            assert set(page_info.fields) == {
                "hasNextPage",
                "hasPreviousPage",
                "startCursor",
                "endCursor",
            }


def test_the_repository_spec_gives_its_types_and_node() -> None:
    _, schema = _api(ROOT / "access_patterns.toml")
    user = schema.type_map["User"]
    assert isinstance(user, GraphQLObjectType)
    assert [i.name for i in user.interfaces] == ["Node"]
    assert str(user.fields["name"].type) == "String!"
    assert str(user.fields["email"].type) == "String"  # its own read rule: null if refused
    assert str(user.fields["createdAt"].type) == "DateTime!"
    assert str(user.fields["groupIds"].type) == "[ID!]"  # optional list of ids
    order = schema.type_map["Order"]
    assert isinstance(order, GraphQLObjectType)
    assert str(order.fields["status"].type) == "OrderStatus!"
    assert str(order.fields["items"].type).startswith("[OrderItem!]")
    query = schema.query_type
    assert query is not None
    assert str(query.fields["node"].type) == "Node"
    assert str(query.fields["user"].args["id"].type) == "ID!"  # by = "id"
    assert "getUsers" not in query.fields  # field = false: kept for loads
    assert str(query.fields["orgRoots"].type) == "[OrgNode!]"  # list; its rule may refuse
    assert str(user.fields["version"].type) == "Int!"  # bounded: 32 bits
    group = schema.type_map["Group"]
    assert isinstance(group, GraphQLObjectType)
    assert str(group.fields["members"].type) == "UserConnection!"  # nullable = false
    # `first` defaults to its pattern's page_size.default, shown to introspection
    assert _default(query.fields["orgRoots"].args["first"]) == "100"
    assert _default(group.fields["members"].args["first"]) == "20"


def _default(argument: GraphQLArgument) -> str | None:
    """An argument's default as introspection shows it; None for none."""
    node = argument.ast_node
    return None if node is None or node.default_value is None else print_ast(node.default_value)


def test_keygraph_schema_prints_the_sdl(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    spec = CASES / "webshop" / "spec.toml"
    assert keygraph_main(["schema", "--spec", str(spec)]) == 0
    printed = capsys.readouterr().out
    assert printed == (CASES / "webshop" / "expected" / "api.graphql").read_text()
    bare = tmp_path / "bare.toml"
    text = spec.read_text(encoding="utf-8")
    bare.write_text(text.split("[patterns")[0], encoding="utf-8")
    assert keygraph_main(["schema", "--spec", str(bare)]) == 1
    assert "gives no API" in capsys.readouterr().err


def _connection_documents(schema: GraphQLSchema, prefix: str) -> str:
    """A query per connection root field, its arguments as variables, with @connection."""
    query = schema.query_type
    assert query is not None
    documents = []
    for name, field in query.fields.items():
        if not get_named_type(field.type).name.endswith("Connection"):
            continue
        keys = [(arg, str(value.type)) for arg, value in field.args.items()]
        keys = [(arg, kind) for arg, kind in keys if arg not in ("first", "after")]
        variables = "".join(f", ${arg}: {kind}" for arg, kind in keys)
        passed = "".join(f"{arg}: ${arg}, " for arg, _ in keys)
        operation = f"{prefix}{name[0].upper()}{name[1:]}Query"
        documents.append(
            f"query {operation}($count: Int, $cursor: String{variables}) {{\n"
            f"  {name}({passed}first: $count, after: $cursor)"
            f' @connection(key: "{operation}_{name}") {{ edges {{ node {{ __typename }} }} }}\n}}'
        )
    return "".join(f"graphql`{document}\n`;\n" for document in documents)


@pytest.mark.parametrize("case", ["webshop", "timeseries"])
def test_relay_compiler_accepts_every_generated_connection(case: str, tmp_path: Path) -> None:
    if not RELAY.exists():
        reason = "relay-compiler is not installed: run `make relay-compiler` (needs npm)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    sdl = CASES / case / "expected" / "api.graphql"
    schema = build_schema(sdl.read_text())
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "documents.ts").write_text(_connection_documents(schema, case))
    config = {"src": "./src", "schema": str(sdl), "language": "typescript"}
    (tmp_path / "relay.config.json").write_text(json.dumps(config))
    done = subprocess.run(
        [str(RELAY)], cwd=tmp_path, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert any((tmp_path / "src" / "__generated__").iterdir())

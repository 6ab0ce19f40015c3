"""Extensions of a generated API (keygraph.api.Extension) served over HTTP on the social
case: a computed field on a generated type, root fields answering generated objects (from
models or dicts) and a type of the extension's own, a mutation; a guard's refusal null with
FORBIDDEN at its path; bounds counted in the cost and held against what a resolver answers;
compiled and graphql-core answers byte for byte; and every declaration that is missing or
names nothing refused as the schema is built, naming its field."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from graphql import GraphQLSchema, get_operation_ast, parse, print_schema

from codegen.cli import main as keygraph_main
from keygraph.api import Extension, PageSize, combined, estimate, executable
from keygraph.caller import Caller
from keygraph.serve import Served
from keygraph.serve.package import extension_at, served
from keygraph.store import Session, Store
from keygraph.tokens import TokenKey, issue
from keygraph.writes import create
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CASES, CODEC, ROOT, SECRET, Compiled, post, served_client
from tests.keygraph.api.serving import unreported
from tests.keygraph.api.social_extension import LATEST_PAGE, extension
from tests.keygraph.api.test_compiled_agree import IGNORE_GRAPHQL_CORE, both

SPEC = CASES / "social" / "spec.toml"
TENANT = "acme"
PLACE = "tests.keygraph.api.social_extension:extension"


@dataclass
class Social:
    """The social package on the embedded store, its API extended, with a member (m1,
    three posts and a draft) written."""

    package: Compiled
    store: Store
    schema: GraphQLSchema
    draft_id: str


@pytest.fixture
async def social(compiled: Callable[[Path], Compiled], store_factory: StoreFactory) -> Social:
    package = compiled(SPEC)
    store = await store_factory("embedded", package.table)
    api = package.module("api").API
    schema = executable(api, [extension(package.package)], package.module("authz"))
    session = Session(store, CODEC)
    member = {"member_id": "m1", "handle": "ann", "name": "Ann"}
    await create(session, TENANT, api.writes["Member"], member)
    for text in ("short", "the longest post", "middling"):
        await create(session, TENANT, api.writes["Post"], {"member_id": "m1", "text": text})
    draft = await create(session, TENANT, api.writes["Draft"], {"member_id": "m1", "text": "d"})
    return Social(package, store, schema, draft.draft_id)


@pytest.fixture
async def client(social: Social) -> AsyncIterator[httpx.AsyncClient]:
    app = Served(social.schema, social.store, TokenKey(SECRET), CODEC, max_cost=60)
    async with served_client(app) as c:
        yield c


def as_(subject: str, role: str = "member") -> dict[str, str]:
    return {"authorization": f"Bearer {issue(SECRET, TENANT, subject, roles=[role])}"}


READ = """{
  getMember(memberId: "m1") { handle greeting }
  latestPosts(memberId: "m1") { text greeting: memberId }
  postStats(memberId: "m1") { count longest { text } }
}"""


async def test_extension_fields_answer_beside_the_generated_ones(
    client: httpx.AsyncClient,
) -> None:
    answer = (await post(client, {"query": READ}, **as_("u9"))).json()
    assert "errors" not in answer
    data = answer["data"]
    assert data["getMember"] == {"handle": "ann", "greeting": "Hello, Ann (@ann)"}
    assert len(data["latestPosts"]) == LATEST_PAGE.default
    assert data["postStats"] == {"count": 3, "longest": {"text": "the longest post"}}


RENAME = """mutation($id: ID!) {
  renameMember(rename: {memberId: $id, newName: "Ada"}) { name version greeting }
}"""


async def test_a_mutation_answers_a_dict_as_its_model_and_its_guard_decides(
    client: httpx.AsyncClient,
) -> None:
    body = {"query": RENAME, "variables": {"id": "m1"}}
    refused = (await post(client, body, **as_("u9"))).json()
    assert refused["data"] == {"renameMember": None}
    (error,) = refused["errors"]
    assert error["path"] == ["renameMember"]
    assert error["extensions"]["code"] == "FORBIDDEN"
    renamed = (await post(client, body, **as_("m1"))).json()
    expected = {"name": "Ada", "version": 2, "greeting": "Hello, Ada (@ann)"}
    assert unreported(renamed) == {"data": {"renameMember": expected}}


async def test_a_pattern_guard_refuses_at_the_fields_path(
    client: httpx.AsyncClient, social: Social
) -> None:
    query = 'query($d: ID!) { getMember(memberId: "m1") { handle } '
    query += 'draftText(memberId: "m1", draftId: $d) }'
    body = {"query": query, "variables": {"d": social.draft_id}}
    refused = (await post(client, body, **as_("u9"))).json()
    assert refused["data"] == {"getMember": {"handle": "ann"}, "draftText": None}
    assert [(e["path"], e["extensions"]["code"]) for e in refused["errors"]] == [
        (["draftText"], "FORBIDDEN")
    ]
    mine = (await post(client, body, **as_("m1"))).json()
    assert unreported(mine) == {"data": {"getMember": {"handle": "ann"}, "draftText": "d"}}


def cost(schema: GraphQLSchema, document: str) -> int | None:
    operation = get_operation_ast(parse(document))
    assert operation is not None
    return estimate(schema, operation, {}, None)


def test_bounds_are_counted_as_generated_fields_are(social: Social) -> None:
    assert cost(social.schema, '{ latestPosts(memberId: "m") { text } }') == 2
    assert cost(social.schema, '{ latestPosts(memberId: "m", first: 4) { text } }') == 4
    assert cost(social.schema, '{ latestPosts(memberId: "m", first: 1000000) { text } }') == 5
    assert cost(social.schema, '{ sloppyPosts(memberId: "m") { text } }') == 1
    pages = '{ postPages(memberId: "m", first: 3) { edges { node { text greeting: memberId } } } }'
    assert cost(social.schema, pages) == 3
    assert cost(social.schema, '{ postStats(memberId: "m") { longest { text } } }') == 1
    assert cost(social.schema, '{ getMember(memberId: "m") { greeting } }') == 1


async def test_hostile_input_is_refused_before_or_at_its_field(
    client: httpx.AsyncClient,
) -> None:
    member = as_("m1")
    aliased = " ".join(f'a{n}: latestPosts(memberId: "m1", first: 5) {{ text }}' for n in range(13))
    over = await post(client, {"query": "{" + aliased + "}"}, **member)
    assert over.status_code == 400
    (error,) = over.json()["errors"]
    assert error["extensions"] == {"code": "QUERY_TOO_COMPLEX", "cost": 65, "limit": 60}
    huge = '{ latestPosts(memberId: "m1", first: 1000000000) { text } }'
    refused = (await post(client, {"query": huge}, **member)).json()
    assert refused["data"] is None
    assert refused["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    typed = 'query($n: Int) { latestPosts(memberId: "m1", first: $n) { text } }'
    wrong = await post(client, {"query": typed, "variables": {"n": "many"}}, **member)
    assert wrong.status_code == 400
    assert wrong.json()["errors"][0]["extensions"]["code"] == "BAD_USER_INPUT"
    literal = await post(
        client, {"query": '{ latestPosts(memberId: 5, first: "x") { text } }'}, **member
    )
    assert literal.status_code == 400
    sloppy = (
        await post(client, {"query": '{ sloppyPosts(memberId: "m1") { text } }'}, **member)
    ).json()
    assert sloppy["data"] is None
    assert [(e["path"], e["extensions"]["code"]) for e in sloppy["errors"]] == [
        (["sloppyPosts"], "INTERNAL")
    ]


PAGES = """query($after: String) {
  postPages(memberId: "m1", after: $after) {
    edges { cursor node { text } } pageInfo { hasNextPage endCursor }
  }
}"""


async def test_a_connection_pages_through_every_item_once(client: httpx.AsyncClient) -> None:
    texts: list[str] = []
    after = None
    while True:
        body = {"query": PAGES, "variables": {"after": after}}
        page = (await post(client, body, **as_("u9"))).json()["data"]["postPages"]
        assert len(page["edges"]) <= LATEST_PAGE.default
        texts += [edge["node"]["text"] for edge in page["edges"]]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert sorted(texts) == ["middling", "short", "the longest post"]


DOCUMENTS = (
    READ,
    PAGES,
    '{ sloppyPosts(memberId: "m1") { text } }',
    'query { draftText(memberId: "m1", draftId: "nope") }',
    '{ latestPosts(memberId: "m1", first: 9) { text } }',
)


@IGNORE_GRAPHQL_CORE
@pytest.mark.parametrize("document", DOCUMENTS)
@pytest.mark.parametrize("caller", [None, Caller("u9", frozenset({"member"}))])
async def test_compiled_and_graphql_core_answer_the_same_bytes(
    social: Social, document: str, caller: Caller | None
) -> None:
    compiled_answer, core_answer = await both(social.schema, document, social.store, caller)
    assert compiled_answer == core_answer


async def test_keygraph_serve_builds_the_extension_it_is_given(social: Social) -> None:
    name = social.package.package.__name__
    app = served(name, social.store, SECRET, [extension_at(PLACE, name)], max_cost=60)
    async with served_client(app) as c:
        answer = (await post(c, {"query": READ}, **as_("u9"))).json()
    assert answer["data"]["getMember"]["greeting"] == "Hello, Ann (@ann)"
    with pytest.raises(ValueError, match=r"is not a keygraph\.api\.Extension"):
        extension_at("tests.keygraph.api.social_extension:SDL", name)
    with pytest.raises(ValueError, match="cannot import the extension"):
        extension_at("tests.keygraph.api.no_such_module", name)


def test_keygraph_schema_prints_the_schema_served(
    social: Social, capsys: pytest.CaptureFixture[str]
) -> None:
    name = social.package.package.__name__
    assert keygraph_main(["schema", "--package", name, "--extend", PLACE]) == 0
    printed = capsys.readouterr().out
    schema = served(name, social.store, SECRET, [extension_at(PLACE, name)]).schema
    assert printed == print_schema(schema) + "\n"
    assert "greeting" in printed  # the extension's field on a generated type
    assert keygraph_main(["schema", "--package", name]) == 0
    assert "greeting" not in capsys.readouterr().out
    assert keygraph_main(["schema", "--package", name, "--extend", "no_such_module"]) == 2
    assert "cannot import the extension no_such_module" in capsys.readouterr().err
    assert keygraph_main(["schema", "--extend", PLACE]) == 2
    assert "name it with --package" in capsys.readouterr().err


def _resolve(_source: Any, _info: Any, **_given: Any) -> Any:
    return None


BROKEN: list[tuple[str, dict[str, dict[str, Any]], str]] = [
    ("extend type Query { one: Post }", {}, "Query.one: no resolver"),
    (
        "extend type Query { many(memberId: ID!): [Post!]! }",
        {"Query.many": {"guard": "posts_by"}},
        "Query.many: a list with no bound",
    ),
    ("extend type Query { one: Post }", {"Query.one": {}}, "Query.one: no guard"),
    (
        "extend type Query { one: Post }",
        {"Query.two": {"public": True}},
        "Query.two: declared, but the extension's SDL adds no such field",
    ),
    (
        "extend type Query { one: Post }",
        {"Query.one": {"guard": "no_pattern"}},
        "Query.one: guard 'no_pattern' names no pattern",
    ),
    (
        "extend type Query { one: Post }",
        {"Query.one": {"guard": "get_draft"}},
        "Query.one: its guard takes member_id, which is neither an argument nor an attribute",
    ),
    (
        "extend type Query { one: Post }",
        {"Query.one": {"guard": "posts_by", "public": True}},
        "Query.one: both a guard and public=True",
    ),
    (
        "extend type Query { many: [Post!]! }",
        {"Query.many": {"page": PageSize(1, 2), "public": True}},
        "Query.many: a page is sized by a `first: Int` argument it lacks",
    ),
    (
        "extend type Member { n: Int }",
        {"Member.n": {"most": 3, "public": True}},
        "Member.n: a bound counts only a list of objects or a connection",
    ),
    (
        "type Bag { posts: [Post!]! } extend type Query { bag: Bag }",
        {"Query.bag": {"public": True}},
        "Bag.posts: no resolver",
    ),
    (
        "extend type Query { posts(first: Int): PostConnection! }",
        {"Query.posts": {"public": True}},
        "Query.posts: a connection with no bound",
    ),
    ("extend type Subscription { ticks: Int }", {}, "Subscription.ticks: no resolver"),
    (
        "extend type Subscription { ticks: Int }",
        {"Subscription.ticks": {"follows": "memberChanged"}},
        "Subscription.ticks: no guard",
    ),
    (
        "extend type Subscription { ticks: Int }",
        {"Subscription.ticks": {"public": True}},
        "Subscription.ticks: follows no subscription of the spec",
    ),
    (
        "extend type Subscription { ticks: Int }",
        {"Subscription.ticks": {"public": True, "follows": ("memberChanged", "tickChanged")}},
        "Subscription.ticks: follows 'tickChanged', which is no subscription of the spec",
    ),
    (
        "extend type Subscription { ticks: [Post!]! }",
        {"Subscription.ticks": {"public": True, "follows": "postsByChanged", "most": 3}},
        "Subscription.ticks: a subscription answers one change at a time; no bound",
    ),
    (
        "extend type Query { one: Post }",
        {"Query.one": {"public": True, "follows": "memberChanged"}},
        "Query.one: follows is for a Subscription field",
    ),
    ("extend type Nothing { x: Int }", {}, "the extension's SDL"),
]


@pytest.mark.parametrize(("sdl", "declared", "message"), BROKEN)
def test_what_an_extension_lacks_is_refused_as_the_schema_is_built(
    social: Social, sdl: str, declared: dict[str, dict[str, Any]], message: str
) -> None:
    broken = Extension(sdl)
    for coordinate, options in declared.items():
        broken.field(coordinate, **options)(_resolve)
    api = social.package.module("api").API
    with pytest.raises(ValueError, match=re.escape(message)):
        executable(api, [broken], social.package.module("authz"))


def test_a_field_is_declared_once() -> None:
    twice = Extension("extend type Query { one: Int }")
    twice.field("Query.one", public=True)(_resolve)
    with pytest.raises(ValueError, match=r"Query\.one is declared twice"):
        twice.field("Query.one", public=True)(_resolve)


def test_extensions_combine_and_a_field_two_declare_is_refused() -> None:
    one, two = Extension("extend type Query { one: Int }"), Extension("type Two { x: Int }")
    one.field("Query.one", public=True)(_resolve)
    together = combined(one, two)
    assert set(together.declared) == {"Query.one"}
    assert "type Two" in together.sdl
    assert "extend type Query" in together.sdl
    again = Extension("extend type Query { one: Int }")
    again.field("Query.one", public=True)(_resolve)
    with pytest.raises(ValueError, match=r"Query\.one is declared twice"):
        combined(one, again)


def test_keygraph_serve_refuses_to_start_with_a_broken_extension(tmp_path: Path) -> None:
    module = tmp_path / "broken_extension.py"
    module.write_text(
        "from keygraph.api import Extension\n"
        "EXTENSION = Extension('extend type Query { lonely: Int }')\n"
    )
    env = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"}
    command = [sys.executable, "-m", "codegen", "serve", "--spec", str(SPEC)]
    command += ["--extend", "broken_extension", "--db", str(tmp_path / "db.sqlite3")]
    run = subprocess.run(
        command, cwd=tmp_path, env=env, capture_output=True, text=True, check=False
    )
    assert run.returncode == 2
    assert "Query.lonely: no resolver" in run.stderr


async def test_the_docs_example_is_served_as_written(social: Social) -> None:
    """docs/library.md's extension, on the social package compiled under its own name."""
    text = (ROOT / "docs" / "library.md").read_text()
    section = text.split("### Extending the API", 1)[1].split("\n## ", 1)[0]
    found = re.search(r"```python\n(.*?)```", section, re.S)
    assert found is not None
    name = social.package.package.__name__
    namespace: dict[str, Any] = {}
    exec(found.group(1).replace("from social.", f"from {name}."), namespace)
    api = social.package.module("api").API
    schema = executable(api, [namespace["EXTENSION"]], social.package.module("authz"))
    app = Served(schema, social.store, TokenKey(SECRET), CODEC)
    query = 'mutation { renameMember(memberId: "m1", name: "Ada") { greeting } }'
    async with served_client(app) as c:
        latest = await post(c, {"query": '{ latestPosts(memberId: "m1") { text } }'}, **as_("u9"))
        refused = await post(c, {"query": query}, **as_("u9"))
        renamed = await post(c, {"query": query}, **as_("m1"))
    assert len(latest.json()["data"]["latestPosts"]) == 2
    assert refused.json()["errors"][0]["extensions"]["code"] == "FORBIDDEN"
    assert unreported(renamed.json()) == {
        "data": {"renameMember": {"greeting": "Hello, Ada (@ann)"}}
    }


def test_a_subscription_type_an_api_lacks_is_its_root_and_follows_nothing(
    compiled: Callable[[Path], Compiled],
) -> None:
    """The webshop case's table has no stream: its API has no subscription to follow."""
    package = compiled(CASES / "webshop" / "spec.toml")
    api = package.module("api").API
    assert package.schema.subscription_type is None
    ticks = Extension("type Subscription { ticks: Int }")
    ticks.field("Subscription.ticks", public=True, follows="productChanged")(_resolve)
    message = "Subscription.ticks: follows 'productChanged', which is no subscription of the spec"
    with pytest.raises(ValueError, match=re.escape(message)):
        executable(api, [ticks])

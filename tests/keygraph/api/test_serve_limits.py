"""keygraph serve's document limits on another spec's API (the social case), as the
repository's server has them: depth, aliases counted through fragment spreads, tokens
(QUERY_TOO_COMPLEX, not a syntax error), pairs of fields under one response key before
validation, fragment cycles, variables holding too many values before they are coerced, and
an operation over the cost limit refused before it is planned; nothing is read for any of
them, and `keygraph serve`'s and `python -m server serve`'s defaults are the same
constants."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import fields
from pathlib import Path
from typing import Any

import httpx
import pytest
from graphql import get_introspection_query
from graphql import validate as graphql_validate

from keygraph.execution.operation import build_executor
from keygraph.execution.plan import Compiler
from keygraph.serve import Served, admission, limits
from keygraph.stores.counting import CountingStore
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.tokens import TokenKey
from server.settings import Limits
from tests.keygraph.api.conftest import CASES, CODEC, SECRET, Compiled, bearer, post, served_client

MEMBER = 'getMember(memberId: "m1")'
FRIENDS = 'friendsOf(memberId: "m1", first: 10) { edges { node { since } } }'


@pytest.fixture
def social(compiled: Callable[[Path], Compiled]) -> Compiled:
    return compiled(CASES / "social" / "spec.toml")


@pytest.fixture
async def store(social: Compiled, tmp_path: Path) -> AsyncIterator[CountingStore]:
    embedded = EmbeddedStore(social.table, path=tmp_path / "social.sqlite3")
    yield CountingStore(embedded)
    await embedded.close()


class Client:
    """An admin of acme asking the social API served with `limits` over a counting store."""

    def __init__(self, client: httpx.AsyncClient, store: CountingStore) -> None:
        self.client = client
        self.store = store

    async def answer(self, query: str, variables: dict[str, Any] | None = None) -> httpx.Response:
        body = {"query": query, "variables": variables or {}}
        return await post(self.client, body, **bearer("acme", "u1"))

    async def refused(self, query: str, variables: dict[str, Any] | None = None) -> list[str]:
        """The messages of a 400 QUERY_TOO_COMPLEX with nothing read, one per error."""
        calls = self.store.calls
        response = await self.answer(query, variables)
        assert response.status_code == 400, response.text
        errors = response.json()["errors"]
        assert {e["extensions"]["code"] for e in errors} == {"QUERY_TOO_COMPLEX"}, errors
        assert self.store.calls == calls
        return [e["message"] for e in errors]

    async def ran(self, query: str, variables: dict[str, Any] | None = None) -> dict[str, Any]:
        response = await self.answer(query, variables)
        assert response.status_code == 200, response.text
        assert "errors" not in response.json(), response.json()
        data: dict[str, Any] = response.json()["data"]
        return data


Serve = Callable[..., AbstractAsyncContextManager[Client]]


@pytest.fixture
def serve(social: Compiled, store: CountingStore) -> Serve:
    """`async with serve(**limits) as api`: the social API served under those limits."""

    @asynccontextmanager
    async def open_api(**given: Any) -> AsyncIterator[Client]:
        served = Served(social.schema, store, TokenKey(SECRET), CODEC, **given)
        async with served_client(served) as client:
            yield Client(client, store)

    return open_api


async def test_the_depth_limit_counts_through_fragments(serve: Serve) -> None:
    deep = f"{{ {MEMBER} {{ friends {{ edges {{ node {{ since }} }} }} }} }}"  # 5 levels
    by_fragment = f"{{ {MEMBER} {{ ...F }} }} fragment F on Member {{ friends {{ ...E }} }}"
    by_fragment += " fragment E on FriendshipConnection { edges { node { since } } }"
    async with serve(max_depth=4) as api:
        assert await api.refused(deep) == ["the query is 5 levels deep, at most 4"]
        assert await api.refused(by_fragment) == ["the query is 5 levels deep, at most 4"]
        shallow = f"{{ {MEMBER} {{ friends {{ pageInfo {{ hasNextPage }} }} }} }}"
        assert await api.ran(shallow) == {"getMember": None}


async def test_introspection_is_not_limited_by_depth(serve: Serve) -> None:
    async with serve() as api:
        data = await api.ran(get_introspection_query())
        assert data["__schema"]["queryType"]["name"] == "Query"


async def test_aliases_are_counted_each_time_their_fragment_is_spread(
    serve: Serve,
) -> None:
    fragment = "fragment F on Member { " + " ".join(f"n{i}: name" for i in range(10)) + " }"
    spread = f"{{ a: {MEMBER} {{ ...F }} b: {MEMBER} {{ ...F }} c: {MEMBER} {{ ...F }} }}"
    async with serve() as api:
        assert await api.refused(spread + fragment) == ["the query uses 33 aliases, at most 30"]
        at_the_limit = "{ " + " ".join(f"a{i}: {MEMBER} {{ name }}" for i in range(30)) + " }"
        assert len(await api.ran(at_the_limit)) == 30


async def test_the_token_limit_is_too_complex_and_exact(serve: Serve) -> None:
    async with serve(max_tokens=4) as api:
        assert await api.ran("{ __typename __typename }") == {"__typename": "Query"}
        refused = await api.refused("{ __typename __typename __typename }")
        assert refused == ["the document has more than 4 tokens"]
        assert await api.refused("{" + " " * limits.MAX_DOCUMENT + "}") == [
            f"the document has {limits.MAX_DOCUMENT + 2} characters, at most {limits.MAX_DOCUMENT}"
        ]


@pytest.mark.parametrize(
    "query",
    [
        "{ " + f"{MEMBER} {{ name }} " * 80 + "}",
        "{ "
        + " ".join(f"...A{i}" for i in range(80))
        + " }\n"
        + "\n".join(f"fragment A{i} on Query {{ {MEMBER} {{ name }} }}" for i in range(80)),
    ],
    ids=["fields", "fragments"],
)
async def test_pairs_of_fields_are_bounded_before_validation(
    serve: Serve, query: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    validated: list[object] = []

    def counted(*args: Any, **options: Any) -> Any:
        validated.append(args)
        return graphql_validate(*args, **options)

    monkeypatch.setattr(admission, "validate", counted)
    async with serve() as api:
        [message] = await api.refused(query)
        assert message.startswith(f"the query selects {2 * 80 * 79 // 2} pairs of fields")
        assert validated == []
        assert await api.ran("{ " + f"{MEMBER} {{ name }} " * 20 + "}") == {"getMember": None}
        assert len(validated) == 1


async def test_a_fragment_bomb_is_refused_by_counting(serve: Serve) -> None:
    spreads = [f"fragment F{n} on Member {{ name ...F{n + 1} ...F{n + 1} }}" for n in range(40)]
    bomb = f"{{ {MEMBER} {{ ...F0 }} }} " + " ".join(spreads) + " fragment F40 on Member { name }"
    assert len(bomb) < 3000
    async with serve() as api:
        [message] = await api.refused(bomb)
        assert message.startswith(f"the query selects {2**41} fields")


async def test_validation_stops_after_its_most_errors(serve: Serve) -> None:
    """A document that conflicts everywhere is refused after MAX_VALIDATION_ERRORS errors
    and graphql-core's note that it stopped, not compared to its end."""
    fields = " ".join(f'getMember(memberId: "m{n}") {{ name }}' for n in range(25))
    conflicting = "{ " + fields + " }"  # each pair differs in its argument
    async with serve() as api:
        response = await api.answer(conflicting)
        assert response.status_code == 400
        errors = response.json()["errors"]
        assert len(errors) == limits.MAX_VALIDATION_ERRORS + 1
        assert "Validation aborted" in errors[-1]["message"]
        assert api.store.calls == 0


async def test_fragment_cycles_are_validation_errors(serve: Serve) -> None:
    cycle = f"{{ {MEMBER} {{ ...A }} }} fragment A on Member {{ name ...B }}"
    cycle += " fragment B on Member { handle ...A }"
    async with serve() as api:
        response = await api.answer(cycle)
        assert response.status_code == 400
        codes = {e["extensions"]["code"] for e in response.json()["errors"]}
        assert codes == {"GRAPHQL_VALIDATION_FAILED"}
        assert api.store.calls == 0


async def test_variables_holding_too_many_values_are_refused_uncoerced(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    built: list[object] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        built.append(args)
        return build_executor(*args, **kwargs)

    monkeypatch.setattr(admission, "build_executor", counted)
    create = "mutation($i: CreateMemberInput!) { createMember(input: $i) { member { name } } }"
    member = {"memberId": "m1", "handle": "ada", "name": "Ada"}
    async with serve() as api:
        refused = await api.refused(create, {"i": member, "pad": [[0]] * 2_500})
        assert refused == [f"the variables hold more than {limits.MAX_VARIABLE_VALUES} values"]
        assert built == []
        assert await api.ran(create, {"i": member, "pad": [0] * 100})
        assert len(built) == 1


async def test_an_operation_over_the_cost_limit_is_never_planned(
    serve: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    planned: list[Compiler] = []
    compile_plan = Compiler.compile

    def counted(self: Compiler) -> Any:
        planned.append(self)
        return compile_plan(self)

    monkeypatch.setattr(Compiler, "compile", counted)
    async with serve(max_cost=5) as api:
        response = await api.answer(f"{{ {FRIENDS} }}")
        assert response.status_code == 400
        [error] = response.json()["errors"]
        assert error["message"] == "the operation may return 10 objects, at most 5"
        assert error["extensions"] == {"code": "QUERY_TOO_COMPLEX", "cost": 10, "limit": 5}
        assert planned == []
        assert api.store.calls == 0
        assert await api.ran(f"{{ {MEMBER} {{ name }} }}") == {"getMember": None}
        assert planned


def test_both_commands_default_to_the_same_limits() -> None:
    served = {f.name: f.default for f in fields(Served) if f.name.startswith("max_")}
    server = {f.name: f.default for f in fields(Limits) if f.name.startswith("max_")}
    shared = served.keys() & server.keys()
    assert shared >= {
        "max_body_bytes",
        "max_document",
        "max_tokens",
        "max_depth",
        "max_aliases",
        "max_fields",
        "max_pairs",
        "max_variable_values",
        "max_cost",
    }
    assert {name: served[name] for name in shared} == {name: server[name] for name in shared}

"""Limits checked before execution: depth, aliases, tokens and page sizes, each configurable;
and the parse and validation caches that keep repeated documents cheap."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import replace

import httpx
import pytest
from graphql import GraphQLError, GraphQLSyntaxError, get_introspection_query

from keygraph.serve import create_app
from keygraph.serve.limits import parse_limited
from keygraph.serve.package import extension_at, served
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.tokens import issue
from tests.server.conftest import SECRET, Api

# users(1) edges(2) node(3) orders(4) edges(5) node(6) user(7) orders(8) edges(9) node(10) id(11)
TOO_DEEP = """{ users { edges { node { orders { edges { node { user {
  orders { edges { node { id } } } } } } } } } } }"""
DEEP_ENOUGH = """{ users { edges { node { orders { edges { node { user {
  orders { edges { id: __typename } } } } } } } } } }"""
DEEP_BY_FRAGMENTS = """query { users { ...U } }
fragment U on UserConnection { edges { node { orders { ...O } } } }
fragment O on OrderConnection { edges { node { user { orders { edges { node { id } } } } } } }"""


def _aliases(count: int) -> str:
    return "{ " + " ".join(f"a{i}: viewer {{ tenant }}" for i in range(count)) + " }"


async def _too_complex(api: Api, query: str) -> None:
    errors = await api.refused(query)
    assert [e["extensions"]["code"] for e in errors] == ["QUERY_TOO_COMPLEX"], errors


async def test_depth_limit(acme: Api) -> None:
    await _too_complex(acme, TOO_DEEP)
    await _too_complex(acme, DEEP_BY_FRAGMENTS)
    assert "errors" not in await acme(DEEP_ENOUGH)


async def test_alias_limit(acme: Api) -> None:
    assert len(await acme.data(_aliases(30))) == 30
    await _too_complex(acme, _aliases(31))


async def test_alias_limit_counts_fragment_spreads(acme: Api) -> None:
    fragment = "fragment F on Viewer { " + " ".join(f"t{i}: tenant" for i in range(10)) + " }"
    query = "{ a: viewer { ...F } b: viewer { ...F } c: viewer { ...F } }\n" + fragment
    await _too_complex(acme, query)  # 3 + 3 x 10 aliases


def _tokens(count: int) -> str:
    """A document of exactly `count` tokens: two braces around __typename fields."""
    return "{ " + "__typename " * (count - 2) + "}"


async def test_token_limit(acme: Api) -> None:
    await _too_complex(acme, _tokens(2001))
    assert (await acme.data(_tokens(40)))["__typename"] == "Query"


def test_the_token_limit_is_exact() -> None:
    assert parse_limited(_tokens(2000), 2000, 65_536).definitions
    with pytest.raises(GraphQLError) as raised:
        parse_limited(_tokens(2001), 2000, 65_536)
    assert raised.value.extensions == {"code": "QUERY_TOO_COMPLEX"}


def test_the_length_limit_is_checked_before_lexing() -> None:
    assert parse_limited("{ viewer { tenant } }" + " " * 79, 2000, 100).definitions
    with pytest.raises(GraphQLError) as raised:
        parse_limited('{ node(id: "' + "x" * 90 + '") { id } }', 2000, 100)
    assert raised.value.message == "the document has 113 characters, at most 100"
    assert raised.value.extensions == {"code": "QUERY_TOO_COMPLEX"}


def test_syntax_errors_are_left_to_the_parser() -> None:
    with pytest.raises(GraphQLSyntaxError):
        parse_limited("{ viewer { tenant ", 2000, 65_536)


async def test_negative_first_is_bad_user_input(acme: Api) -> None:
    assert await acme.codes("{ users(first: -1) { edges { node { id } } } }") == ["BAD_USER_INPUT"]


async def test_first_of_100_is_allowed(acme: Api) -> None:
    assert (await acme.data("{ users(first: 100) { edges { node { id } } } }"))["users"] == {
        "edges": []
    }


async def test_introspection_is_not_limited_by_depth(acme: Api) -> None:
    data = await acme.data(get_introspection_query())
    assert data["__schema"]["queryType"]["name"] == "Query"


@pytest.fixture
async def strict(store: EmbeddedStore) -> AsyncIterator[Api]:
    """`make serve`'s app with its limits lowered, as an admin of acme."""
    extension = extension_at("server.extension", "generated")
    api = served("generated", store, SECRET, [extension], dev=True)
    app = create_app(replace(api, max_depth=4, max_aliases=1, max_tokens=50))
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        yield Api(client, issue(SECRET, "acme", roles=["admin"]))


async def test_limits_are_configurable(strict: Api) -> None:
    assert "errors" not in await strict("{ users(first: 5) { edges { node { id } } } }")
    await _too_complex(
        strict, "{ users { edges { node { orders { edges { id: __typename } } } } } }"
    )
    await _too_complex(strict, "{ a: viewer { tenant } b: viewer { tenant } }")
    await _too_complex(strict, _tokens(51))


async def _found(api: Api, query: str) -> str:
    """How the dev-mode answer to `query` says its document was found."""
    body = await api(query)
    assert "errors" not in body
    return str(body["extensions"]["documentCache"]["request"])


async def test_repeated_documents_are_parsed_and_validated_once(acme: Api) -> None:
    plain = "query CacheProbe { viewer { tenant } }"
    assert [await _found(acme, plain) for _ in range(3)] == ["prepared", "text", "text"]
    assert await _found(acme, plain + " ") == "prepared"


async def test_documents_differing_in_literals_are_found_by_their_shape(acme: Api) -> None:
    async def found(query: str) -> str:
        return await _found(acme, query)

    literal = "query CacheProbe { viewer { tenant } users(first: 3) { edges { node { id } } } }"
    assert [await found(literal) for _ in range(3)] == ["prepared", "shape", "shape"]
    assert await found(literal.replace("3", "4")) == "shape"
    assert await found(literal + " ") == "prepared"

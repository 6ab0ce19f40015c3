"""Hostile HTTP requests to /graphql: bodies that are not a JSON object (or not JSON, or not
UTF-8), members of the wrong type, wrong content types and methods, odd GET parameters,
bodies past the cap (declared and streamed), and odd headers (bearer tokens with hostile
claims, Idempotency-Key and request ids)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import jwt

from keygraph.serve.limits import MAX_BODY_BYTES, MAX_QUERY_STRING
from tests.server.conftest import SECRET

QUERY = "{ viewer { tenant } }"


@dataclass(frozen=True)
class Request:
    """One request: method, raw body (or a body streamed in chunks, without a length),
    query parameters and headers (added to acme's token and a JSON content type)."""

    label: str
    method: str = "POST"
    content: bytes = b""
    chunks: tuple[bytes, ...] = ()
    params: tuple[tuple[str, str], ...] = ()
    headers: dict[str, str] = field(default_factory=dict)

    def stream(self) -> AsyncIterator[bytes] | bytes:
        if not self.chunks:
            return self.content

        async def chunked() -> AsyncIterator[bytes]:
            for chunk in self.chunks:
                yield chunk

        return chunked()


def _json(label: str, body: Any, **headers: str) -> Request:
    return Request(label, content=json.dumps(body).encode(), headers=headers)


def _raw(label: str, content: bytes, **headers: str) -> Request:
    return Request(label, content=content, headers=headers)


def _get(label: str, *params: tuple[str, str]) -> Request:
    return Request(label, method="GET", params=params)


def token(claims: dict[str, Any], algorithm: str = "HS256") -> str:
    """A bearer header with these claims, signed with the test secret."""
    key = SECRET if algorithm == "HS256" else ""
    return f"Bearer {jwt.encode(claims, key, algorithm=algorithm)}"


FAR = 4_000_000_000
"""An expiry far in the future, in seconds."""

NOT_OBJECTS = [
    _json(f"body {value!r}", value)
    for value in ("{ viewer { tenant } }", 1, 1.5, None, True, [], [{"query": QUERY}], [1])
]
WRONG_VALUES: dict[str, list[Any]] = {
    "query": [1, None, ["x"], {}, True, ""],
    "variables": ["x", "{}", 1, [], True, [{"a": 1}]],
    "operationName": [1, [], {}, True, "Nope", "x" * 10_000],
    "extensions": ["x", 1, [], True, {"persistedQuery": "x"}, {"persistedQuery": {}}],
}
WRONG_MEMBERS = [
    _json(f"{name}: {value!r}", {"query": QUERY, name: value})
    for name, values in WRONG_VALUES.items()
    for value in values
] + [
    _json("no query", {}),
    _json("no query, variables only", {"variables": {"a": 1}}),
    _json(
        "two operations, no name",
        {"query": "query A { viewer { tenant } } query B { viewer { tenant } }"},
    ),
    _json(
        "mutation named by a query's name",
        {"query": "query A { viewer { tenant } }", "operationName": "A\x00"},
    ),
    _json("subscription", {"query": "subscription { viewer { tenant } }"}),
]
NOT_JSON = [
    _raw("empty body", b""),
    _raw("open brace", b"{"),
    _raw("NUL", b"\x00"),
    _raw("python dict", b"{'query': '{ viewer { tenant } }'}"),
    _raw("trailing garbage", json.dumps({"query": QUERY}).encode() + b" }"),
    _raw("NaN", b'{"query": "{ viewer { tenant } }", "variables": {"a": NaN}}'),
    _raw("1e400", b'{"query": "{ viewer { tenant } }", "variables": {"a": 1e400}}'),
    _raw(
        "400-digit int",
        b'{"query": "{ viewer { tenant } }", "variables": {"a": 1' + b"0" * 400 + b"}}",
    ),
    _raw("deep array", b"[" * 100_000 + b"]" * 100_000),
    _raw(
        "deep variables",
        b'{"query": "{ viewer { tenant } }", "variables": {"a": '
        + b"[" * 5000
        + b"]" * 5000
        + b"}}",
    ),
    _raw("duplicate keys", b'{"query": "{ viewer { tenant } }", "query": "{ nope }"}'),
    _raw("invalid UTF-8", b'{"query": "{ viewer { tenant \xff\xfe } }"}'),
    _raw("invalid UTF-8 key", b'{"qu\xc3ery": "{ viewer { tenant } }"}'),
    _raw("lone surrogate", b'{"query": "{ viewer { tenant } } \\ud800"}'),
    _raw(
        "lone surrogate in a string", b'{"query": "{ userByEmail(email: \\"\\ud800\\") { id } }"}'
    ),
    _raw("UTF-8 BOM", b"\xef\xbb\xbf" + json.dumps({"query": QUERY}).encode()),
    _raw("UTF-16", json.dumps({"query": QUERY}).encode("utf-16")),
]
CONTENT_TYPES = [
    _raw(f"content type {kind!r}", json.dumps({"query": QUERY}).encode(), **{"content-type": kind})
    for kind in (
        "text/plain",
        "application/graphql",
        "application/x-www-form-urlencoded",
        "multipart/form-data",
        "multipart/form-data; boundary=x",
        "application/json; charset=latin-1",
        "application/json; charset=utf-16",
        "",
        "*/*",
        "application/\x7f",
    )
] + [
    _raw(
        "raw document as application/graphql",
        QUERY.encode(),
        **{"content-type": "application/graphql"},
    ),
    _raw(
        "form fields",
        b"query=%7B+viewer+%7B+tenant+%7D+%7D",
        **{"content-type": "application/x-www-form-urlencoded"},
    ),
    _raw(
        "multipart without parts",
        b"--x--\r\n",
        **{"content-type": "multipart/form-data; boundary=x"},
    ),
    _raw(
        "multipart with a bad operations part",
        b'--x\r\nContent-Disposition: form-data; name="operations"\r\n\r\n[1]\r\n--x\r\n'
        b'Content-Disposition: form-data; name="map"\r\n\r\n{"0": ["x"]}\r\n--x--\r\n',
        **{"content-type": "multipart/form-data; boundary=x"},
    ),
]
GETS = [
    _get("GET without parameters"),
    _get("GET empty query", ("query", "")),
    _get("GET mutation", ("query", 'mutation { createGroup(input: {name: "x"}) { id } }')),
    _get("GET variables not JSON", ("query", QUERY), ("variables", "{")),
    _get("GET variables a list", ("query", QUERY), ("variables", "[1]")),
    _get("GET variables 1e400", ("query", QUERY), ("variables", '{"a": 1e400}')),
    _get("GET extensions not JSON", ("query", QUERY), ("extensions", "x")),
    _get("GET repeated query", ("query", QUERY), ("query", "{ nope }")),
    _get("GET operationName missing", ("query", QUERY), ("operationName", "Nope")),
    _get("GET NUL", ("query", "\x00")),
    _get("GET long query string", ("query", "{ viewer { tenant } }" + " " * MAX_QUERY_STRING)),
    Request("GET invalid percent-encoding", method="GET", params=(("query", "%ff%fe"),)),
]
METHODS = [
    Request(f"{method} with a query", method=method, content=json.dumps({"query": QUERY}).encode())
    for method in ("PUT", "PATCH", "DELETE", "OPTIONS", "HEAD", "TRACE")
]
LARGE = [
    _raw("body one byte past the cap", b" " * (MAX_BODY_BYTES + 1)),
    Request(
        "streamed body past the cap",
        chunks=(b'{"query": "{ viewer { tenant } }", "pad": "',)
        + (b"x" * 65_536,) * (MAX_BODY_BYTES // 65_536 + 1)
        + (b'"}',),
    ),
    _raw("content-length not a number", b"{}", **{"content-length": "lots"}),
]
TOKENS = [
    Request(label, content=json.dumps({"query": QUERY}).encode(), headers={"authorization": value})
    for label, value in (
        ("exp of 400 digits", token({"tenant": "acme", "exp": 10**400})),
        ("exp -10**400", token({"tenant": "acme", "exp": -(10**400)})),
        ("exp a string", token({"tenant": "acme", "exp": "soon"})),
        ("exp 1e308", token({"tenant": "acme", "exp": 1e308})),
        ("exp a list", token({"tenant": "acme", "exp": [FAR]})),
        ("nbf of 400 digits", token({"tenant": "acme", "exp": FAR, "nbf": 10**400})),
        ("iat of 400 digits", token({"tenant": "acme", "exp": FAR, "iat": 10**400})),
        ("tenant a number", token({"tenant": 1, "exp": FAR})),
        ("tenant a list", token({"tenant": ["acme"], "exp": FAR})),
        ("tenant empty", token({"tenant": "", "exp": FAR})),
        ("tenant of 10,000 characters", token({"tenant": "t" * 10_000, "exp": FAR})),
        ("tenant with a delimiter", token({"tenant": "acme#USER#x", "exp": FAR})),
        ("tenant with NUL", token({"tenant": "ac\x00me", "exp": FAR})),
        ("tenant astral", token({"tenant": "\U0001f600", "exp": FAR})),
        ("sub a number", token({"tenant": "acme", "sub": 1, "exp": FAR})),
        ("sub of 10,000 characters", token({"tenant": "acme", "sub": "s" * 10_000, "exp": FAR})),
        ("alg none", token({"tenant": "acme", "exp": FAR}, "none")),
        ("no exp", token({"tenant": "acme"})),
        ("bearer alone", "Bearer"),
        ("bearer and spaces", "Bearer    "),
        ("three dots", "Bearer ..."),
        ("garbage token", "Bearer \x7f\x00"),
        ("basic scheme", "Basic YTpi"),
        ("very long token", "Bearer " + "a" * 100_000),
    )
]
HEADERS = (
    [
        Request(
            f"Idempotency-Key {label}",
            content=json.dumps({"query": QUERY}).encode(),
            headers={"idempotency-key": value},
        )
        for label, value in (("empty", ""), ("300 characters", "k" * 300), ("control", "\x01k"))
    ]
    + [
        Request(
            f"X-Request-Id {label}",
            content=json.dumps({"query": QUERY}).encode(),
            headers={"x-request-id": value},
        )
        for label, value in (("10,000 characters", "r" * 10_000), ("newline-like", "a\x0bb"))
    ]
    + [
        Request(
            "Accept graphql-response+json with a non-object body",
            content=b"[1]",
            headers={"accept": "application/graphql-response+json"},
        ),
        Request(
            "Accept graphql-response+json with invalid JSON",
            content=b"{",
            headers={"accept": "application/graphql-response+json"},
        ),
    ]
)
REQUESTS = (
    NOT_OBJECTS
    + WRONG_MEMBERS
    + NOT_JSON
    + CONTENT_TYPES
    + GETS
    + METHODS
    + LARGE
    + TOKENS
    + HEADERS
)

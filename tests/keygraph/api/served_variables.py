"""Operations of a schema's root fields, each argument a variable, with values drawn for
the variables: of the argument's type at its edges (Int's and Float's bounds, floats no
position has, ids of odd shapes, times far off in any zone, long and odd text), of the
wrong type, or any JSON at all."""

from __future__ import annotations

import base64
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from graphql import (
    GraphQLEnumType,
    GraphQLInputObjectType,
    GraphQLInputType,
    GraphQLList,
    GraphQLNonNull,
    GraphQLSchema,
    Undefined,
)
from hypothesis import strategies as st

Operation = tuple[str, dict[str, Any]]
"""A document and its variables."""
WRONG_ONE_IN = 12
"""How often a value is null or any JSON rather than one of its type: one in this many."""


def _id(text: str) -> str:
    return base64.urlsafe_b64encode(text.encode()).decode().rstrip("=")


ODD_IDS = [
    _id("User:" + "[" * 3000 + "]" * 3000),  # nested past the recursion limit
    _id("OrgNode:[" + "[" * 50 + "]" * 50 + "]"),
    _id("OrgNode:[[]]"),
    _id('OrgNode:[["a",""]]'),
    _id('OrgNode:[["' + '","'.join("a" * 40) + '"]]'),
    _id('Address:["a",{"b":1}]'),
    _id("Shop:[NaN]"),
    _id("Order:[1e999]"),
    _id("User:[" + "9" * 5000 + "]"),
    _id("User:"),
    _id(":x"),
    _id("User:\x00"),
    "=",
    "%%%",
    "x" * 70_000,
]
"""Ids of no object: deep, empty, wrong-typed parts, and text that is no id at all."""
INT32 = st.one_of(
    st.sampled_from([0, -1, 1, 2, 3, 2**31 - 1, -(2**31)]),
    st.integers(-(2**31), 2**31 - 1),
)
PAST_INT32 = st.sampled_from([2**31, -(2**31) - 1, 2**53, -(2**63), 10**30])
FLOATS = st.one_of(
    st.sampled_from([0.0, -0.0, 90.0, -90.0, 180.0, 90.000001, 1e308, -1e308, 5e-324]),
    st.floats(allow_nan=False, allow_infinity=False),
    INT32,
    PAST_INT32,
)
ZONES = st.integers(-1439, 1439).map(lambda m: timezone(timedelta(minutes=m)))
TIMES = st.one_of(
    st.datetimes(timezones=ZONES).map(datetime.isoformat),
    st.sampled_from(
        ["0001-01-01T00:00:00+23:59", "9999-12-31T23:59:59-23:59", "2025-01-01", "now", ""]
    ),
    st.datetimes(timezones=st.just(UTC)).map(datetime.isoformat),
)
TEXT = st.one_of(
    st.text(max_size=30),
    st.sampled_from(["", " ", "#", "T#globex#USER#x", "\x00", "a" * 2000, "\U0001f600" * 500]),
)
ANY_JSON = st.recursive(
    st.none() | st.booleans() | INT32 | PAST_INT32 | FLOATS | TEXT,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=8,
)


def value(kind: GraphQLInputType, ids: list[str], emails: list[str]) -> st.SearchStrategy[Any]:
    """A value for a variable of `kind`: mostly of its type, at times null or any JSON."""
    return _mostly(_typed(kind, ids, emails), st.none() | ANY_JSON)


def _mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """`good`, but about one in WRONG_ONE_IN times `bad` (drawn for a number amid the range:
    hypothesis favours its ends)."""
    return st.integers(1, WRONG_ONE_IN).flatmap(lambda n: bad if n == WRONG_ONE_IN // 2 else good)


def _typed(kind: GraphQLInputType, ids: list[str], emails: list[str]) -> st.SearchStrategy[Any]:
    if isinstance(kind, GraphQLNonNull):
        return _typed(kind.of_type, ids, emails)
    if isinstance(kind, GraphQLList):
        return st.lists(value(kind.of_type, ids, emails), max_size=6)
    if isinstance(kind, GraphQLInputObjectType):
        return _fields(
            {name: (field.type, field.default_value) for name, field in kind.fields.items()},
            ids,
            emails,
        )
    if isinstance(kind, GraphQLEnumType):
        return _mostly(st.sampled_from(sorted(kind.values)), TEXT)
    if kind.name == "ID":
        return st.one_of(st.sampled_from(ids), st.sampled_from(ODD_IDS), TEXT)
    if kind.name == "String":
        return st.one_of(st.sampled_from(emails), TEXT)
    return SCALARS.get(kind.name, ANY_JSON)


def _fields(
    declared: dict[str, tuple[GraphQLInputType, Any]], ids: list[str], emails: list[str]
) -> st.SearchStrategy[dict[str, Any]]:
    """Values of an input object's fields (or an operation's variables): the required ones
    mostly given, the others at times, and now and then a name none has."""
    required = {
        name: value(kind, ids, emails)
        for name, (kind, default) in declared.items()
        if isinstance(kind, GraphQLNonNull) and default is Undefined
    }
    optional = {
        name: value(kind, ids, emails)
        for name, (kind, _) in declared.items()
        if name not in required
    }
    given = st.fixed_dictionaries(required, optional=optional)
    left_out = st.fixed_dictionaries({}, optional={**required, **optional})
    extra = st.dictionaries(TEXT, ANY_JSON, max_size=1)
    return st.tuples(_mostly(given, left_out), _mostly(st.just({}), extra)).map(
        lambda pair: {**pair[1], **pair[0]}
    )


SCALARS: dict[str, st.SearchStrategy[Any]] = {
    "Int": _mostly(INT32, PAST_INT32),
    "Long": st.one_of(INT32, PAST_INT32, st.integers()),
    "Float": FLOATS,
    "Boolean": st.booleans(),
    "DateTime": TIMES,
}


def operations(
    schema: GraphQLSchema, ids: list[str], emails: list[str]
) -> st.SearchStrategy[Operation]:
    """An operation of one root field of Query or Mutation, every argument a variable of
    its declared type, with values drawn for them."""
    made = []
    for root in (schema.query_type, schema.mutation_type):
        if root is None:
            continue
        kind = "query" if root is schema.query_type else "mutation"
        for name, field in root.fields.items():
            declared = ", ".join(f"${arg}: {a.type}" for arg, a in field.args.items())
            given = ", ".join(f"{arg}: ${arg}" for arg in field.args)
            document = f"{kind}{f'({declared})' if declared else ''} {{ "
            document += f"{name}{f'({given})' if given else ''} {{ __typename }} }}"
            variables = _fields(
                {arg: (a.type, a.default_value) for arg, a in field.args.items()}, ids, emails
            )
            made.append(st.tuples(st.just(document), variables))
    return st.one_of(made)

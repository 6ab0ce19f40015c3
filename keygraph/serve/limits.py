"""What one operation may ask before it runs, for `keygraph serve` and the repository's
server alike: each limit's default, declared here once, and the checks made before
validation (characters and tokens, while parsing), before coercion (the variables' values)
and before planning (the cost). Depth, aliases, fields and pairs are measured in
document_size.py. Each refusal is QUERY_TOO_COMPLEX."""

from __future__ import annotations

from typing import Any

from graphql import DocumentNode, GraphQLError, Source, parse
from graphql.error import GraphQLSyntaxError
from graphql.language import Lexer, TokenKind

TOO_COMPLEX = "QUERY_TOO_COMPLEX"
MAX_BODY_BYTES = 1024 * 1024
MAX_DOCUMENT = 65_536
"""Characters of a document, checked before it is lexed (graphql-core's lexer takes tens of
milliseconds per 100,000)."""
MAX_TOKENS = 2_000
MAX_DEPTH = 10
"""Levels of an operation, fragments expanded; introspection fields do not count."""
MAX_ALIASES = 30
"""Aliases an operation holds, a fragment's counted each time it is spread."""
MAX_FIELDS = 2_500
"""Fields an operation selects, a fragment's counted each time it is spread: checked before
validation, whose work grows with the pairs of fields it compares."""
MAX_PAIRS = 1_000
"""Pairs of fields under one response key at one place of the response, which validation
compares two by two (about 30 ms at most; a legitimate query makes a few dozen)."""
MAX_VARIABLE_VALUES = 5_000
"""Values a request's variables hold: list items and object fields, at any depth."""
MAX_COST = 25_000
"""The most objects one operation's answer may hold (keygraph.api.cost)."""
STREAM_COST = 25_000
"""A query whose answer may hold more objects than this is read and sent in parts
(parted.py), trading store waves for memory."""
PART_OBJECTS = 2_000
"""Objects a part of such an answer holds, about."""


def too_complex(message: str, **extensions: Any) -> GraphQLError:
    """A limit's error: QUERY_TOO_COMPLEX, `extensions` beside the code."""
    return GraphQLError(message, extensions={"code": TOO_COMPLEX, **extensions})


def _count_tokens(query: str, limit: int) -> int:
    """Tokens in the document, counting stops past `limit`; lexing errors are left to
    the parser, which reports them with their location."""
    lexer = Lexer(Source(query))
    count = 0
    try:
        while lexer.advance().kind != TokenKind.EOF:
            count += 1
            if count > limit:
                break
    except GraphQLSyntaxError:
        pass
    return count


def parse_limited(query: str, max_tokens: int, max_length: int) -> DocumentNode:
    """The parsed document; QUERY_TOO_COMPLEX past `max_length` characters (checked first)
    or `max_tokens` tokens (counted before the parser builds anything); GraphQLSyntaxError
    when it is no GraphQL."""
    if len(query) > max_length:
        raise too_complex(f"the document has {len(query)} characters, at most {max_length}")
    if _count_tokens(query, max_tokens) > max_tokens:
        raise too_complex(f"the document has more than {max_tokens} tokens")
    return parse(query, no_location=False)


def check_variables(variables: dict[str, Any], max_values: int) -> GraphQLError | None:
    """QUERY_TOO_COMPLEX when the variables hold more than `max_values` values (each list
    item and object field counts; counting stops past the limit): coercing them takes tens
    of milliseconds per 5,000."""
    count = 0
    stack: list[Any] = [variables]
    while stack:
        value = stack.pop()
        if isinstance(value, dict):
            count += len(value)
            stack.extend(value.values())
        elif isinstance(value, list):
            count += len(value)
            stack.extend(value)
        if count > max_values:
            return too_complex(f"the variables hold more than {max_values} values")
    return None


def over_cost(cost: int, max_cost: int) -> GraphQLError:
    """The refusal of an operation whose answer may hold more than `max_cost` objects."""
    message = f"the operation may return {cost} objects, at most {max_cost}"
    return too_complex(message, cost=cost, limit=max_cost)


MAX_VALIDATION_ERRORS = 20
"""Errors validation reports before it stops: a document built to conflict everywhere (pairs
of fields under one key with long, differing arguments) is refused after as many, not
compared to its end (bench/README.md, "hostile documents")."""
MAX_QUERY_STRING = 8_192
"""Bytes of a GET request's query string; a longer one is refused 414 (send it with POST)."""
MAX_IN_FLIGHT = 64
"""Requests a worker runs at once; more are refused 503 OVERLOADED rather than queued."""

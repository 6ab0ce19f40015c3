"""This repository's API as a graphql-core schema, as `python -m server serve` answers with
it (server/compiled.py: the generated package's API with server/extension/), and the size
limits `keygraph serve` checks a document against by default, for the tests that read or
check documents without serving them."""

from __future__ import annotations

from dataclasses import dataclass

from graphql import GraphQLSchema

from keygraph.serve.limits import MAX_ALIASES, MAX_DEPTH, MAX_FIELDS, MAX_PAIRS
from keygraph.serve.package import extension_at, schema_of
from server.compiled import EXTENSION, PACKAGE

SCHEMA: GraphQLSchema = schema_of(PACKAGE, [extension_at(EXTENSION, PACKAGE)])


@dataclass(frozen=True)
class SizeLimits:
    """The limits a document's size is checked against (keygraph/serve/document_size.py)."""

    max_depth: int = MAX_DEPTH
    max_aliases: int = MAX_ALIASES
    max_fields: int = MAX_FIELDS
    max_pairs: int = MAX_PAIRS


LIMITS = SizeLimits()
"""keygraph serve's defaults."""

"""This repository's API as a graphql-core schema, as `python -m server serve` answers with
it (server/compiled.py: the generated package's API with server/extension/), for the tests
that read or validate against the schema without serving it."""

from __future__ import annotations

from graphql import GraphQLSchema

from keygraph.serve.package import extension_at, schema_of
from server.compiled import EXTENSION, PACKAGE

SCHEMA: GraphQLSchema = schema_of(PACKAGE, [extension_at(EXTENSION, PACKAGE)])

"""The API's schema: the GraphQL layer's Query and Mutation (server/graphql) with the
Subscription type of realtime (server/realtime), the one schema the app serves and
`python -m server schema` exports."""

from __future__ import annotations

from server.graphql.schema import KeygraphSchema, assemble
from server.realtime.fields import Subscription
from server.settings import ExecutorKind, Limits


def build_schema(limits: Limits, executor: ExecutorKind = "compiled") -> KeygraphSchema:
    return assemble(Subscription, limits, executor)


def sdl() -> str:
    """The schema in SDL, as exported to schema.graphql."""
    return str(build_schema(Limits())) + "\n"

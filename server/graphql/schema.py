"""The GraphQL schema: every domain's root fields merged into Query and Mutation, with the
operation preparation (caches and limits) and error logging. The Subscription type is
realtime's, a layer above: the schema is assembled with it by server/api.py."""

from __future__ import annotations

from typing import Any

import strawberry
from graphql import GraphQLError
from strawberry.tools import merge_types
from strawberry.types import ExecutionContext

from server.graphql.compiled.executor import CompiledExecutor
from server.graphql.error_format import log_errors
from server.graphql.executor import Executor
from server.graphql.prepare import Preparation, prepare_extension
from server.graphql.resolvers.address import AddressMutation
from server.graphql.resolvers.group import GroupMutation, GroupQuery
from server.graphql.resolvers.node import NodeQuery
from server.graphql.resolvers.order import OrderMutation, OrderQuery
from server.graphql.resolvers.org import OrgMutation, OrgQuery
from server.graphql.resolvers.shop import ShopMutation, ShopQuery
from server.graphql.resolvers.user import UserMutation, UserQuery
from server.graphql.tables import check
from server.graphql.types.address import Address
from server.graphql.types.group import Group
from server.graphql.types.order import Order
from server.graphql.types.org import OrgNode
from server.graphql.types.shop import Shop
from server.graphql.types.user import User
from server.settings import ExecutorKind, Limits

Query = merge_types("Query", (NodeQuery, UserQuery, OrderQuery, GroupQuery, OrgQuery, ShopQuery))
Mutation = merge_types(
    "Mutation",
    (UserMutation, AddressMutation, OrderMutation, GroupMutation, OrgMutation, ShopMutation),
)
NODE_TYPES: list[Any] = [User, Address, Order, Group, OrgNode, Shop]


class KeygraphSchema(strawberry.Schema):
    """The schema, with how its operations are prepared and whether they run compiled."""

    def __init__(self, *args: Any, preparation: Preparation, compiled: bool, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.preparation = preparation
        self.compiled = compiled

    def process_errors(
        self, errors: list[GraphQLError], execution_context: ExecutionContext | None = None
    ) -> None:
        context = execution_context.context if execution_context is not None else None
        log_errors(errors, getattr(context, "request_id", None))


def assemble(
    subscription: type, limits: Limits, executor: ExecutorKind = "compiled"
) -> KeygraphSchema:
    """The schema of Query, Mutation and the given Subscription root type; FieldTablesError
    when a field lacks its entry in the tables kept by (type, field) (server/graphql/tables.py)."""
    preparation = Preparation(limits)
    compiled = executor == "compiled"
    schema = KeygraphSchema(
        query=Query,
        mutation=Mutation,
        subscription=subscription,
        types=NODE_TYPES,
        extensions=[prepare_extension(preparation)],
        execution_context_class=CompiledExecutor if compiled else Executor,
        preparation=preparation,
        compiled=compiled,
    )
    check(schema._schema)
    return schema

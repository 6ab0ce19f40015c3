"""A relation's field answered for all the parents of a wave in one call (its batch, as
compiled execution calls it) answers what its resolver answers parent by parent (as
graphql-core's executor calls it), byte for byte and with the same store calls: where a rule
refuses some parents, where items are missing, where one parent's read fails mid-page, and
for a page continued after a cursor that holds for one parent only."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TypeVar

import orjson
import pytest
from graphql import GraphQLObjectType

from keygraph.api import ApiContext, execute
from keygraph.caller import Caller
from keygraph.errors import StoreUnavailable
from keygraph.execution.plan import BATCH
from keygraph.plan import Delete, Get, Put, Query
from keygraph.store import Session, Store
from keygraph.stores.view import Planned, StoreView
from server.seed.tenant import SeedSizes, seed
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CODEC, ROOT, Compiled, ask
from tests.keygraph.api.test_compiled_agree import IGNORE_GRAPHQL_CORE
from tests.keygraph.api.test_relations import Calls

R = TypeVar("R")
SIZES = SeedSizes(users=6, orders=12, groups=3, org_nodes=3, org_depth=2, shops=1, max_members=4)
USERS = """{ users(first: 20) { edges { node { userId
  groups { edges { node { groupId name } } }
  defaultAddress { city }
  memberships(first: 2) { edges { node { groupId group { name } user { userId } } } }
  orders(first: 2%s) { edges { cursor node { id orderId user { userId } } }
    pageInfo { hasNextPage endCursor } }
} } } }"""
RELATIONS = ("groups", "defaultAddress", "memberships", "orders")
AT = datetime(2026, 1, 1, tzinfo=UTC)


class Failing(StoreView):
    """Fails every read of one user's item collection, and the get of its address."""

    def __init__(self, inner: Store, user_id: str) -> None:
        super().__init__(inner)
        self.partition = f"#USER#{user_id}"

    async def _call(self, kind: str, plan: Planned, call: Callable[[], Awaitable[R]]) -> R:
        if isinstance(plan, Query):
            partition = plan.partition
        elif isinstance(plan, Get):
            partition = str(plan.key.get("PK"))
        else:
            partition = ""
        if partition.endswith(self.partition):
            raise StoreUnavailable("the user's partition is down")
        return await super()._call(kind, plan, call)


@pytest.fixture
async def seeded(
    kind: str, store_factory: StoreFactory, compiled: Callable[[Path], Compiled]
) -> tuple[Compiled, Store, list[dict[str, Any]]]:
    """The spec's package on seeded data with items missing: a group some users list, an
    order at its own key whose copy a user's orders still read, and the default address of
    one of two users given one."""
    package = compiled(ROOT / "access_patterns.toml")
    store = await store_factory(kind, package.table)
    await seed(store, "acme", SIZES, progress=False)
    user_class = package.module("models.user").User
    address_class = package.module("models.address").Address
    for n, has_address in enumerate((True, False)):
        user = user_class(
            user_id=f"u{n}",
            email=f"u{n}@example.com",
            name="U",
            created_at=AT,
            version=1,
            default_address_id=f"a{n}",
        )
        await store.put(Put(user.to_item("acme")))
        if has_address:
            address = address_class(
                user_id=f"u{n}",
                address_id=f"a{n}",
                label="home",
                line1="1 Main St",
                city=f"City {n}",
                postal_code="1000",
                country="NL",
                created_at=AT,
                version=1,
            )
            await store.put(Put(address.to_item("acme")))
    listed = await ask(package.schema, store, "acme", USERS % "")
    users = [edge["node"] for edge in listed["data"]["users"]["edges"]]
    group_id = next(e["node"]["groupId"] for user in users for e in user["groups"]["edges"])
    order_id = next(e["node"]["orderId"] for u in users for e in u["orders"]["edges"])
    await store.delete(Delete(package.module("keys.group").key("acme", group_id)))
    await store.delete(Delete(package.module("keys.order").key("acme", order_id)))
    return package, store, users


async def answers(
    package: Compiled, store: Store, document: str, caller: Caller | None
) -> list[tuple[bytes, dict[str, int]]]:
    """The document's answer and store calls compiled, then by graphql-core's executor."""
    found = []
    for compiled_run in (True, False):
        calls = Calls(store)
        context = ApiContext(Session(calls, CODEC, caller), "acme")
        answer = await execute(package.schema, document, context, compiled=compiled_run)
        found.append((orjson.dumps(answer), dict(calls.kinds)))
    return found


def callers(users: list[dict[str, Any]]) -> list[Caller | None]:
    """The table's own reads, an admin, and a member whom rules refuse others' items."""
    member = Caller(users[0]["userId"], frozenset({"member"}))
    return [None, Caller("boss", frozenset({"admin"})), member]


@IGNORE_GRAPHQL_CORE
async def test_batched_relations_answer_as_each_parent_alone(
    seeded: tuple[Compiled, Store, list[dict[str, Any]]],
) -> None:
    package, store, users = seeded
    owner = next(user for user in users if user["orders"]["pageInfo"]["hasNextPage"])
    after = f', after: "{owner["orders"]["pageInfo"]["endCursor"]}"'
    failing = Failing(store, "u0")
    seen = set()
    for caller in callers(users):
        for document in (USERS % "", USERS % after):
            for on in (store, failing):
                (compiled, compiled_calls), (core, core_calls) = await answers(
                    package, on, document, caller
                )
                assert compiled == core, (caller, document, on)
                assert compiled_calls == core_calls, (caller, document, on)
                answer = orjson.loads(compiled)
                errors = answer.get("errors", ())
                seen |= {(e["extensions"]["code"], e["path"][-1]) for e in errors}
    assert seen == {
        ("FORBIDDEN", "orders"),
        ("FORBIDDEN", "defaultAddress"),
        ("INVALID_CURSOR", "orders"),
        ("STORE_UNAVAILABLE", "orders"),
        ("STORE_UNAVAILABLE", "groups"),  # u0 keeps no group_ids: its memberships are read
        ("STORE_UNAVAILABLE", "memberships"),
        ("STORE_UNAVAILABLE", "defaultAddress"),
    }


async def test_compiled_execution_calls_each_relation_once_a_wave(
    seeded: tuple[Compiled, Store, list[dict[str, Any]]],
) -> None:
    package, store, users = seeded
    user_type = package.schema.type_map["User"]
    assert isinstance(user_type, GraphQLObjectType)
    sources: dict[str, list[int]] = {name: [] for name in RELATIONS}
    for name in RELATIONS:
        field = user_type.fields[name]
        many = field.extensions[BATCH]

        async def counted(
            ctx: Any, parents: list[Any], _name: str = name, _many: Any = many, **given: Any
        ) -> Any:
            sources[_name].append(len(parents))
            return await _many(ctx, parents, **given)

        field.extensions = {**field.extensions, BATCH: counted}
    answer = await ask(package.schema, store, "acme", USERS % "")
    assert answer["data"]["users"]["edges"]
    assert sources == {name: [len(users)] for name in RELATIONS}

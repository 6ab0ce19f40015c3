"""`keygraph serve` on DynamoDB Local, over HTTP, as a user runs it: a table the library
wrote, served by `--endpoint-url`, answers every query as the same items on the embedded
store do, for the webshop case's spec and this repository's."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from keygraph.plan import Put
from keygraph.store import Store
from keygraph.stores.dynamodb.local import LOCAL_KEY_ID, LOCAL_REGION, LOCAL_SECRET, DynamoDBLocal
from keygraph.stores.dynamodb.store import DynamoDBStore
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.tokens import issue
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CASES, ROOT, SECRET, Compiled, stock
from tests.keygraph.api.serving import keygraph_serve, unreported

Write = Callable[[Compiled, Store], Awaitable[None]]
AWS = {
    "AWS_ACCESS_KEY_ID": LOCAL_KEY_ID,
    "AWS_SECRET_ACCESS_KEY": LOCAL_SECRET,
    "AWS_REGION": LOCAL_REGION,
}


async def _shop(package: Compiled, store: Store) -> None:
    await stock(package, store)
    money = package.module("models.money").Money(amount=900, currency="EUR")
    paid = package.module("models.enums").OrderStatus.PAID
    order = package.module("models.order").Order
    for number in range(3):
        placed = order(
            customer_id="c1",
            order_id=f"O{number}",
            placed_on=f"2026-04-1{number}",
            status=paid,
            total=money,
        )
        await store.put(Put(placed.to_item("acme")))


async def _users(package: Compiled, store: Store) -> None:
    at = datetime(2026, 4, 18, tzinfo=UTC)
    group = package.module("models.group").Group
    user = package.module("models.user").User
    for number in range(2):
        named = group(group_id=f"g{number}", name=f"Group {number}", created_at=at)
        await store.put(Put(named.to_item("acme")))
    for number in range(3):
        person = user(
            user_id=f"u{number}",
            email=f"u{number}@example.com",
            name=f"User {number}",
            created_at=at,
            version=1,
            group_ids=[f"g{n}" for n in range(number % 2 + 1)],
        )
        await store.put(Put(person.to_item("acme")))


SHOP = (
    '{ product(sku: "TEA") { sku title price { amount currency } } }',
    "{ catalog(first: 2) { edges { cursor node { sku title } } pageInfo { hasNextPage "
    "endCursor } } }",
    "{ ordersByStatus(status: PAID) { edges { node { orderId placedOn total { amount } } } } }",
)
USERS = (
    '{ user(id: "VXNlcjp1MQ") { id userId name groupIds '
    "groups { edges { node { groupId name } } } } }",
    "{ users(first: 2) { edges { cursor node { userId name groups { edges { node { name } } } } } "
    "pageInfo { hasNextPage endCursor } } }",
    '{ group(id: "R3JvdXA6ZzE") { groupId name members { edges { node { name } } } } }',
)
SPECS: dict[str, tuple[Path, Write, tuple[str, ...]]] = {
    "webshop": (CASES / "webshop" / "spec.toml", _shop, SHOP),
    "repository": (ROOT / "access_patterns.toml", _users, USERS),
}


def _ask(url: str, query: str) -> Any:
    token = issue(SECRET, "acme", "u1", roles=["admin"])
    request = urllib.request.Request(
        f"{url}/graphql",
        data=json.dumps({"query": query}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def _empty(value: Any) -> bool:
    """Whether an answer holds nothing: null, or only empty lists and objects."""
    if isinstance(value, dict):
        return all(_empty(v) for v in value.values())
    if isinstance(value, list):
        return all(_empty(v) for v in value)
    return value is None


@pytest.mark.dynamodb_local
@pytest.mark.parametrize("name", SPECS)
async def test_a_dynamodb_table_is_served_as_the_embedded_store_is(
    name: str,
    compiled: Callable[[Path], Compiled],
    store_factory: StoreFactory,
    dynamodb_local: DynamoDBLocal,
    tmp_path: Path,
) -> None:
    spec, write, queries = SPECS[name]
    package = compiled(spec)
    embedded = await store_factory("embedded", package.table)
    dynamodb = await store_factory("dynamodb-local", package.table)
    for store in (embedded, dynamodb):
        await write(package, store)
    assert isinstance(embedded, EmbeddedStore)
    assert isinstance(dynamodb, DynamoDBStore)
    secret = {"KEYGRAPH_JWT_SECRET": SECRET}
    on_file = ("--spec", spec, "--db", embedded.path)
    endpoint = ("--endpoint-url", dynamodb_local.endpoint_url)
    on_dynamodb = ("--spec", spec, *endpoint, "--table-name", dynamodb.table.name)
    (tmp_path / "file").mkdir()
    (tmp_path / "dynamodb").mkdir()
    with (
        keygraph_serve(*on_file, cwd=tmp_path / "file", env=secret) as file_url,
        keygraph_serve(*on_dynamodb, cwd=tmp_path / "dynamodb", env={**secret, **AWS}) as url,
    ):
        for query in queries:
            expected = _ask(file_url, query)
            assert "errors" not in expected, expected
            assert not _empty(expected["data"]), query
            assert unreported(_ask(url, query)) == unreported(expected), query

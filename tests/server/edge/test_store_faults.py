"""DynamoDB's faults on the GraphQL path: the app on DynamoDB Local behind a fault-injecting
proxy. What is safe to send again is retried and answers as if nothing happened; a write
that may have run is not sent again and is STORE_UNAVAILABLE; throttling that outlasts the
retries is THROTTLED; a cancelled transaction is the domain's CONFLICT; no fault is
INTERNAL."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from generated.queries.cleanup_task import cleanup_tasks
from generated.table import TABLE
from keygraph.cursor import CursorCodec
from keygraph.serve import create_app
from keygraph.store import Session
from keygraph.stores.dynamodb import admin
from keygraph.stores.dynamodb.local import LOCAL_KEY_ID, LOCAL_REGION, LOCAL_SECRET, DynamoDBLocal
from keygraph.stores.dynamodb.retry import RetryPolicy
from keygraph.stores.dynamodb.store import DynamoDBStore
from server.auth.tokens import issue_token
from server.compiled import compiled
from server.domain import cleanup
from server.settings import Limits, Settings
from testkit.faults import (
    INTERNAL_SERVER_ERROR,
    RESET_AFTER,
    RESET_BEFORE,
    THROTTLING,
    THROUGHPUT_EXCEEDED,
    Fault,
    FaultProxy,
    cancelled,
    delay,
)
from testkit.stores import unique_table
from tests.server.conftest import SECRET, Api
from tests.waiting import eventually, until

pytestmark = pytest.mark.dynamodb_local

FAST = RetryPolicy(max_attempts=4, base_delay=0.005, max_delay=0.02)

USERS = "{ users(first: 10) { edges { node { id email } } } }"
ORDERS = "query($id: ID!) { user(id: $id) { orders { edges { node { id totalCents } } } } }"
SHOPS = "{ shopsNear(lat: 48.85, lng: 2.35, radiusKm: 5) { shop { id name } } }"
CREATE_SHOP = 'mutation { createShop(input: {name: "S", lat: 48.85, lng: 2.35}) { id } }'


class StoreApi(Api):
    """A client of the API, and the store the app runs on."""

    def __init__(self, client: httpx.AsyncClient, token: str, store: DynamoDBStore) -> None:
        super().__init__(client, token)
        self.store = store


MakeApi = Callable[..., Awaitable[StoreApi]]


@pytest.fixture
def proxy(dynamodb_local: DynamoDBLocal) -> Iterator[FaultProxy]:
    with FaultProxy(dynamodb_local.endpoint_url, seed=7) as proxy:
        yield proxy


@pytest.fixture
async def make_api(
    dynamodb_client: Any, proxy: FaultProxy, tmp_path: Path
) -> AsyncIterator[MakeApi]:
    """`await make_api(request_timeout=..., retry=...)`: an admin of acme on the app over a
    new table, every data-plane call through the proxy."""
    opened: list[tuple[DynamoDBStore, httpx.AsyncClient]] = []

    async def make(request_timeout: float = 10.0, retry: RetryPolicy = FAST) -> StoreApi:
        live = unique_table(TABLE)
        admin.create_table(dynamodb_client, live)
        store = DynamoDBStore(
            live,
            endpoint_url=proxy.url,
            region=LOCAL_REGION,
            access_key_id=LOCAL_KEY_ID,
            secret_access_key=LOCAL_SECRET,
            retry=retry,
            max_concurrency=8,
        )
        limits = Limits(request_timeout=request_timeout)
        settings = Settings(data_dir=tmp_path, jwt_secret=SECRET, limits=limits).resolved()
        transport = httpx.ASGITransport(app=create_app(compiled(settings, store)))
        client = httpx.AsyncClient(transport=transport, base_url="http://keygraph.test")
        opened.append((store, client))
        return StoreApi(client, issue_token(settings, "acme", "alice", roles=["admin"]), store)

    yield make
    for store, client in opened:
        await client.aclose()
        await store.close()
        admin.delete_table(dynamodb_client, store.table.name)


@pytest.fixture
async def api(make_api: MakeApi) -> StoreApi:
    return await make_api()


def error_of(body: dict[str, Any]) -> dict[str, Any]:
    assert len(body.get("errors", ())) == 1, body
    error: dict[str, Any] = body["errors"][0]
    return error


@pytest.mark.parametrize(
    "fault",
    [THROTTLING, THROUGHPUT_EXCEEDED, INTERNAL_SERVER_ERROR, RESET_BEFORE, RESET_AFTER],
    ids=lambda fault: fault.name,
)
async def test_a_read_is_retried_through_faults(api: Api, proxy: FaultProxy, fault: Fault) -> None:
    user = await api.create_user("a@example.org")
    proxy.add(fault, operations={"Query"}, times=2)
    data = await api.data(USERS)
    assert [edge["node"]["id"] for edge in data["users"]["edges"]] == [user["id"]]
    assert proxy.injected["Query", fault.name] == 2
    assert proxy.calls["Query"] == 3


@pytest.mark.parametrize(
    ("fault", "code"),
    [
        (THROTTLING, "THROTTLED"),
        (THROUGHPUT_EXCEEDED, "THROTTLED"),
        (INTERNAL_SERVER_ERROR, "STORE_UNAVAILABLE"),
        (RESET_BEFORE, "STORE_UNAVAILABLE"),
    ],
    ids=lambda value: getattr(value, "name", value),
)
async def test_a_read_failing_past_its_retries_has_its_code(
    api: Api, proxy: FaultProxy, fault: Fault, code: str
) -> None:
    proxy.add(fault, operations={"Query"})
    error = error_of(await api(USERS))
    assert error["extensions"]["code"] == code
    if code == "THROTTLED":
        assert error["extensions"]["retryAfter"] == 1
    assert proxy.calls["Query"] == FAST.max_attempts


async def test_a_latency_spike_is_waited_out(api: Api, proxy: FaultProxy) -> None:
    await api.create_user("a@example.org")
    proxy.add(delay(0.3), operations={"Query"}, times=1)
    data = await api.data(USERS)
    assert len(data["users"]["edges"]) == 1
    assert proxy.injected["Query", "delay 0.3s"] == 1


async def test_a_latency_spike_past_the_deadline_is_a_timeout(
    make_api: MakeApi, proxy: FaultProxy
) -> None:
    api = await make_api(request_timeout=0.5)
    proxy.add(delay(2.0), operations={"Query"}, times=1)
    response = await api.client.post(
        "/graphql", json={"query": USERS}, headers={"Authorization": f"Bearer {api.token}"}
    )
    assert response.status_code == 504
    assert response.json()["errors"][0]["extensions"]["code"] == "TIMEOUT"


async def test_throttling_is_given_up_inside_the_deadline(
    make_api: MakeApi, proxy: FaultProxy
) -> None:
    """Backoffs that would run past the request's deadline are not waited: THROTTLED, in
    time, rather than the request cut off as TIMEOUT."""
    patient = RetryPolicy(max_attempts=100, base_delay=0.05, max_delay=0.4)
    api = await make_api(request_timeout=1.0, retry=patient)
    proxy.add(THROTTLING, operations={"Query"})
    error = error_of(await api(USERS))
    assert error["extensions"]["code"] == "THROTTLED"
    assert 2 < proxy.calls["Query"] < 100


async def shops(api: Api) -> int:
    return len((await api.data(SHOPS))["shopsNear"])


@pytest.mark.parametrize("fault", [THROTTLING, THROUGHPUT_EXCEEDED], ids=lambda fault: fault.name)
async def test_a_throttled_conditional_write_is_retried(
    api: Api, proxy: FaultProxy, fault: Fault
) -> None:
    proxy.add(fault, operations={"PutItem"}, times=2)
    assert (await api.data(CREATE_SHOP))["createShop"]["id"]
    assert (proxy.calls["PutItem"], await shops(api)) == (3, 1)


@pytest.mark.parametrize(
    ("fault", "written"),
    [(INTERNAL_SERVER_ERROR, 0), (RESET_BEFORE, 0), (RESET_AFTER, 1)],
    ids=lambda value: getattr(value, "name", value),
)
async def test_a_conditional_write_that_may_have_run_is_not_sent_again(
    api: Api, proxy: FaultProxy, fault: Fault, written: int
) -> None:
    """createShop is a conditional PutItem: sent again after it ran, it would fail its own
    condition. Its outcome unknown, it is STORE_UNAVAILABLE; the proxy ran it (RESET_AFTER)
    or not."""
    proxy.add(fault, operations={"PutItem"}, times=1)
    assert error_of(await api(CREATE_SHOP))["extensions"]["code"] == "STORE_UNAVAILABLE"
    assert (proxy.calls["PutItem"], await shops(api)) == (1, written)


@pytest.mark.parametrize(
    "fault",
    [
        THROTTLING,
        INTERNAL_SERVER_ERROR,
        RESET_BEFORE,
        RESET_AFTER,
        cancelled("None", "TransactionConflict", "None"),
    ],
    ids=lambda fault: fault.name + "".join(fault.reasons),
)
async def test_a_transaction_is_retried_under_its_token_and_applied_once(
    api: Api, proxy: FaultProxy, fault: Fault
) -> None:
    """createOrder is one TransactWriteItems with a ClientRequestToken: sent again after it
    ran (RESET_AFTER), DynamoDB answers the repeat as the first and writes nothing more."""
    user = await api.create_user("a@example.org")
    proxy.add(fault, operations={"TransactWriteItems"}, times=1)
    order = await api.create_order(user["id"], [("A", 2, 50)])
    assert order["totalCents"] == 100
    assert proxy.calls["TransactWriteItems"] == 3  # the user's, and the order's two
    data = await api.data(ORDERS, {"id": user["id"]})
    assert [edge["node"]["id"] for edge in data["user"]["orders"]["edges"]] == [order["id"]]


async def test_a_transaction_cancelled_by_a_failed_condition_is_a_conflict(
    api: Api, proxy: FaultProxy
) -> None:
    """The email claim's condition failed (DynamoDB's reason for the second action): not
    retried, the domain's CONFLICT, and nothing written."""
    proxy.add(cancelled("None", "ConditionalCheckFailed"), operations={"TransactWriteItems"})
    body = await api('mutation { createUser(input: {email: "a@example.org", name: "A"}) { id } }')
    error = error_of(body)
    assert (error["extensions"]["code"], error["message"]) == (
        "CONFLICT",
        "the email 'a@example.org' is already in use",
    )
    assert proxy.calls["TransactWriteItems"] == 1
    proxy.clear()
    assert (await api.data(USERS))["users"]["edges"] == []


async def test_transaction_conflicts_past_the_retries_are_a_conflict(
    api: Api, proxy: FaultProxy
) -> None:
    proxy.add(cancelled("TransactionConflict", "None"), operations={"TransactWriteItems"})
    body = await api('mutation { createUser(input: {email: "a@example.org", name: "A"}) { id } }')
    assert error_of(body)["extensions"]["code"] == "CONFLICT"
    assert proxy.calls["TransactWriteItems"] == FAST.max_attempts


DELETE_USER = """mutation($id: ID!) { deleteUser(input: {id: $id, expectedVersion: 1}) {
  deletedId complete } }"""
ORDER = "query($id: ID!) { order(id: $id) { id } }"


async def user_with_orders(api: Api, count: int) -> tuple[str, list[str]]:
    user = await api.create_user("a@example.org")
    orders = [await api.create_order(user["id"], [("A", 1, 10)]) for _ in range(count)]
    return user["id"], [order["id"] for order in orders]


async def gone(api: StoreApi, user_id: str, order_ids: list[str]) -> bool:
    """Whether the user's orders, and every cleanup task, are gone."""
    for order_id in order_ids:
        if (await api.data(ORDER, {"id": order_id}))["order"] is not None:
            return False
    session = Session(api.store, CursorCodec(b"k" * 32))
    return not (await cleanup_tasks(session, first=10)).items


async def test_a_cleanup_retries_through_faults_inline(api: StoreApi, proxy: FaultProxy) -> None:
    """The delete's own transaction answered and lost (sent again under its token), the
    cleanup's reads throttled and failed, its transaction and the task's delete lost after
    they ran: all sent again, and the cleanup is done before the mutation answers."""
    user_id, order_ids = await user_with_orders(api, 3)
    proxy.add(RESET_AFTER, operations={"TransactWriteItems"}, times=2)
    proxy.add(THROTTLING, operations={"Query"}, times=2)
    proxy.add(INTERNAL_SERVER_ERROR, operations={"Query"}, times=1)
    proxy.add(RESET_AFTER, operations={"DeleteItem"}, times=1)
    data = await api.data(DELETE_USER, {"id": user_id})
    assert data["deleteUser"] == {"deletedId": user_id, "complete": True}
    assert sum(proxy.injected.values()) == 6
    proxy.clear()
    assert await gone(api, user_id, order_ids)


async def test_a_cleanup_throttled_past_its_retries_finishes_in_the_background(
    api: StoreApi, proxy: FaultProxy, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cleanup, "RETRY_PAUSE", 0.05)
    user_id, order_ids = await user_with_orders(api, 2)
    throttled = proxy.add(THROUGHPUT_EXCEEDED, operations={"Query"})
    data = await api.data(DELETE_USER, {"id": user_id})
    assert data["deleteUser"] == {"deletedId": user_id, "complete": False}
    inline = proxy.injected["Query", THROUGHPUT_EXCEEDED.name]
    await until(  # pages fail in the background meanwhile, and are tried again
        lambda: proxy.injected["Query", THROUGHPUT_EXCEEDED.name] > inline + FAST.max_attempts,
        "the background cleanup to try a page again",
    )
    proxy.remove(throttled)
    await asyncio.wait_for(cleanup.drain(), 10)
    assert proxy.injected["Query", THROUGHPUT_EXCEEDED.name] > FAST.max_attempts
    assert await gone(api, user_id, order_ids)


CREATE_USER = 'mutation { createUser(input: {email: "a@example.org", name: "A"}) { id } }'


async def keyed(api: Api, query: str, key: str) -> httpx.Response:
    headers = {"Authorization": f"Bearer {api.token}", "Idempotency-Key": key}
    return await api.client.post("/graphql", json={"query": query}, headers=headers)


async def test_a_throttled_keyed_mutation_runs_again_once_the_throttle_clears(
    api: Api, proxy: FaultProxy
) -> None:
    """A throttled transaction did not run: its THROTTLED answer (a 200) is not kept, and
    the retry with the same key writes the user, once."""
    throttled = proxy.add(THROTTLING, operations={"TransactWriteItems"})
    first = await keyed(api, CREATE_USER, "k-throttled")
    assert error_of(first.json())["extensions"]["code"] == "THROTTLED"
    assert proxy.calls["TransactWriteItems"] == FAST.max_attempts
    proxy.remove(throttled)
    retry = await keyed(api, CREATE_USER, "k-throttled")
    assert "Idempotent-Replayed" not in retry.headers
    user_id = retry.json()["data"]["createUser"]["id"]
    again = await keyed(api, CREATE_USER, "k-throttled")
    assert again.headers.get("Idempotent-Replayed") == "true"
    assert again.json()["data"]["createUser"]["id"] == user_id
    assert proxy.calls["TransactWriteItems"] == FAST.max_attempts + 1
    data = await api.data(USERS)
    assert [edge["node"]["id"] for edge in data["users"]["edges"]] == [user_id]


async def test_a_keyed_write_whose_answer_was_lost_is_not_run_again(
    api: Api, proxy: FaultProxy
) -> None:
    """createShop's conditional PutItem ran and its answer was lost: running it again could
    write a second shop, so the key is kept UNKNOWN and every retry is told so."""
    proxy.add(delay(0), operations={"PutItem"}, times=1)  # the ledger's claim passes
    proxy.add(RESET_AFTER, operations={"PutItem"}, times=1)  # the shop's is lost
    first = await keyed(api, CREATE_SHOP, "k-lost")
    assert error_of(first.json())["extensions"]["code"] == "STORE_UNAVAILABLE"
    for _ in range(2):
        retry = await keyed(api, CREATE_SHOP, "k-lost")
        assert retry.status_code == 409
        assert error_of(retry.json())["extensions"]["code"] == "IDEMPOTENCY_OUTCOME_UNKNOWN"
    assert proxy.injected["PutItem", RESET_AFTER.name] == 1
    assert await shops(api) == 1
    fresh = await keyed(api, CREATE_SHOP, "k-new")
    assert fresh.json()["data"]["createShop"]["id"]
    assert await shops(api) == 2


async def test_a_keyed_read_that_failed_runs_again(api: Api, proxy: FaultProxy) -> None:
    """A query's Idempotency-Key is ignored: nothing is kept of its STORE_UNAVAILABLE, and
    the retry runs afresh."""
    failing = proxy.add(RESET_BEFORE, operations={"Query"})
    first = await keyed(api, USERS, "k-read")
    assert error_of(first.json())["extensions"]["code"] == "STORE_UNAVAILABLE"
    proxy.remove(failing)
    retry = await keyed(api, USERS, "k-read")
    assert retry.json()["data"]["users"]["edges"] == []
    assert "Idempotent-Replayed" not in retry.headers


async def test_a_keyed_write_cut_off_by_the_timeout_is_not_run_again(
    make_api: MakeApi, proxy: FaultProxy
) -> None:
    """The request timed out while the shop's PutItem was on its way (DynamoDB runs it
    late): the key is kept UNKNOWN. One that timed out before writing runs again."""
    api = await make_api(request_timeout=1.5)
    proxy.add(delay(0), operations={"PutItem"}, times=1)  # the ledger's claim passes
    proxy.add(delay(3.0), operations={"PutItem"}, times=1)
    first = await keyed(api, CREATE_SHOP, "k-slow")
    assert (first.status_code, error_of(first.json())["extensions"]["code"]) == (504, "TIMEOUT")
    retry = await keyed(api, CREATE_SHOP, "k-slow")
    assert (retry.status_code, error_of(retry.json())["extensions"]["code"]) == (
        409,
        "IDEMPOTENCY_OUTCOME_UNKNOWN",
    )

    async def late_put_ran() -> bool:
        return await shops(api) > 0

    await eventually(late_put_ran, "the late PutItem to run")
    assert await shops(api) == 1

    slow = proxy.add(delay(3.0), operations={"Query"}, times=1)
    assert (await keyed(api, USERS, "k-slow-read")).status_code == 504
    assert slow.times == 0
    again = await keyed(api, USERS, "k-slow-read")
    assert again.json()["data"]["users"]["edges"] == []

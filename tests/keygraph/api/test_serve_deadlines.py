"""`keygraph serve`'s request deadline (keygraph/serve/bounded.py), in process: a request
whose store stalls is answered 504 TIMEOUT at its deadline (on a clock the test moves), not
before, its stalled call cancelled, and the next request is served; a deadline not reached
changes nothing; the time its platform leaves a request cuts it sooner. A mutation cut with
its Idempotency-Key claimed, on both stores, leaves nothing half-written: cut before it
wrote, its retry runs; cut once its transaction may have landed, its retries get 409
IDEMPOTENCY_OUTCOME_UNKNOWN and nothing is written twice; cut while claiming, the claim is
given up. KEYGRAPH_REQUEST_TIMEOUT sets it, read as the repository's server reads it, and
`keygraph serve` refuses to start on a value that cannot work."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest

from codegen.cli import main, parser
from generated.table import TABLE
from keygraph import deadline
from keygraph.api import ApiContext, execute
from keygraph.plan import Get, Put
from keygraph.serve import cli as serve_cli
from keygraph.serve import deadlines as deadlines_module
from keygraph.serve.deadlines import Deadlines
from keygraph.serve.package import extension_at, served
from keygraph.serve.request_settings import REQUEST_TIMEOUT, RequestSettings, request_settings
from keygraph.serve.served import MEDIA
from keygraph.store import Session, Store
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.stores.view import Forwarding, Planned
from keygraph.tokens import issue, verify
from server.seed.tenant import SeedSizes, seed
from server.settings import SettingsError, load_settings
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CASES, SECRET, Compiled, bearer, post, served_client
from tests.keygraph.api.serving import unreported
from tests.keygraph.api.stalling import Stalling
from tests.keygraph.api.test_writes import by_type, items
from tests.waiting import until

TIMEOUT = 0.3
SOCIAL_TIMEOUT = 1.0
"""The social API's deadline, which every request on DynamoDB Local must meet unstalled."""
SLACK = 1.0
"""Seconds a cut may come after its deadline: a sweep's tick (0.05) and a busy machine."""
SIZES = SeedSizes(users=4, orders=2, groups=2, org_nodes=2, org_depth=1, shops=1, max_members=2)
NAMES = "query Names { users { edges { node { name } } } }"
GROUPS = "query Groups { users { edges { node { name groups { edges { node { name } } } } } } }"
SOCIAL = CASES / "social" / "spec.toml"
CREATE = 'mutation Create { createMember(input: {memberId: "m1", handle: "ann", name: "Ann"})'
CREATE += " { member { handle version } } }"
RENAME = 'mutation Rename { updateMember(input: {memberId: "m1", expectedVersion: 1, '
RENAME += 'handle: "bea"}) { member { handle version } } }'


@pytest.fixture
async def seeded(tmp_path: Path) -> AsyncIterator[Store]:
    """This repository's table on a fresh embedded store, with a tenant's seed data."""
    store = EmbeddedStore(TABLE, path=tmp_path / "keygraph.sqlite3")
    await seed(store, "acme", SIZES, progress=False)
    try:
        yield store
    finally:
        await store.close()


@asynccontextmanager
async def repository(store: Store, **options: Any) -> AsyncIterator[httpx.AsyncClient]:
    """A client of `keygraph serve`'s app for the generated package and its extension on
    `store`, with Served's `options`."""
    extension = extension_at("server.extension", "generated")
    async with served_client(served("generated", store, SECRET, [extension], **options)) as c:
        yield c


async def timed(client: httpx.AsyncClient, query: str) -> httpx.Response:
    """The answer to `query` from a member of acme; TimeoutError when none comes within
    TIMEOUT and SLACK (a deadline that never cut it)."""
    async with asyncio.timeout(TIMEOUT + SLACK):
        return await post(client, {"query": query}, **bearer())


def cut_code(response: httpx.Response) -> str:
    assert response.headers["content-type"] == MEDIA
    (error,) = response.json()["errors"]
    return str(error["extensions"]["code"])


class Clock:
    """The deadlines' clock (their module's `time`), moved on by the test: the sweeps run on
    the event loop's timer, what they compare against is this."""

    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


class Sweeps:
    """Counts the deadline sweeps that ran."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.count = 0
        expire = Deadlines._expire

        def counted(deadlines: Deadlines) -> None:
            self.count += 1
            expire(deadlines)

        monkeypatch.setattr(Deadlines, "_expire", counted)

    async def pass_one(self) -> None:
        """Returns once a sweep that started after the call has run."""
        seen = self.count
        await until(lambda: self.count >= seen + 2, "a sweep")


async def test_a_stalled_store_is_cut_at_its_deadline_and_the_next_request_served(
    seeded: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock, sweeps = Clock(), Sweeps(monkeypatch)
    monkeypatch.setattr(deadlines_module, "time", clock)
    stalling = Stalling(seeded)
    async with repository(stalling, request_timeout=TIMEOUT) as client:
        stalling.before = lambda _kind, _plan: True
        cutting = asyncio.create_task(post(client, {"query": NAMES}, **bearer()))
        await until(lambda: stalling.stalled == 1, "the store call to stall")
        clock.now += TIMEOUT - 0.01
        await sweeps.pass_one()
        assert not cutting.done()  # not before its deadline
        clock.now += 0.02
        await until(cutting.done, "the request to be cut at the next sweep")
        cut = cutting.result()
        assert (cut.status_code, cut_code(cut)) == (504, "TIMEOUT")
        assert f"longer than {TIMEOUT:g} s" in cut.json()["errors"][0]["message"]
        assert stalling.stalled == stalling.cancelled == 1  # the worker holds nothing
        assert cutting.cancelling() == 0  # the cancellation was the deadline's, undone
        stalling.before = lambda _kind, _plan: False
        served_next = await timed(client, NAMES)
    assert served_next.status_code == 200, served_next.text
    assert len(served_next.json()["data"]["users"]["edges"]) == SIZES.users


class Remaining(Forwarding):
    """Forwards every call, noting the request deadline's seconds left when it is made."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self.left: list[float | None] = []

    async def _call(self, kind: str, plan: Planned, call: Callable[[], Any]) -> Any:
        self.left.append(deadline.remaining())
        return await call()


async def test_a_deadline_not_reached_changes_nothing(seeded: Store) -> None:
    noting = Remaining(seeded)
    async with repository(noting, request_timeout=TIMEOUT * 100) as client:
        answer = await timed(client, GROUPS)
        app = served("generated", seeded, SECRET, [extension_at("server.extension", "generated")])
    caller = verify(bearer()["authorization"].removeprefix("Bearer "), app.tokens).caller
    session = Session(seeded, app.cursors.bound_to(caller.subject), caller)
    expected = await execute(app.schema, GROUPS, ApiContext(session, "acme"))
    assert answer.status_code == 200
    assert unreported(answer.json()) == expected
    assert "errors" not in expected
    assert len(noting.left) == 2  # the users, then their groups
    assert all(left is not None and 0 < left <= TIMEOUT * 100 for left in noting.left)
    task = asyncio.current_task()
    assert task is not None
    assert task.cancelling() == 0
    assert deadline.remaining() is None  # reset once the request ended


async def test_the_time_its_platform_leaves_a_request_cuts_it_sooner(seeded: Store) -> None:
    stalling = Stalling(seeded)
    seen: list[Mapping[str, Any]] = []

    def time_left(scope: Mapping[str, Any]) -> float:
        seen.append(scope)
        return TIMEOUT

    async with repository(stalling, request_timeout=60, time_left=time_left) as client:
        stalling.before = lambda _kind, _plan: True
        cut = await timed(client, NAMES)
    assert (cut.status_code, cut_code(cut)) == (504, "TIMEOUT")
    assert f"longer than {TIMEOUT:g} s" in cut.json()["errors"][0]["message"]
    assert [scope["path"] for scope in seen] == ["/graphql"]


@pytest.fixture
async def social(
    compiled: Callable[[Path], Compiled], store_factory: StoreFactory, kind: str
) -> AsyncIterator[tuple[httpx.AsyncClient, Stalling]]:
    """The social API served on each store with a short deadline, through a store that
    stalls the calls a test picks."""
    package = compiled(SOCIAL)
    stalling = Stalling(await store_factory(kind, package.table))
    app = served(package.package.__name__, stalling, SECRET, request_timeout=SOCIAL_TIMEOUT)
    async with served_client(app) as client:
        yield client, stalling


def keyed(key: str) -> dict[str, str]:
    token = issue(SECRET, "acme", "m1", roles=["member"])
    return {"authorization": f"Bearer {token}", "idempotency-key": key}


async def send(client: httpx.AsyncClient, query: str, key: str) -> httpx.Response:
    """The answer to `query` under the Idempotency-Key `key`, due within the deadline."""
    async with asyncio.timeout(SOCIAL_TIMEOUT + SLACK):
        return await client.post("/graphql", json={"query": query}, headers=keyed(key))


async def members(store: Store) -> list[dict[str, Any]]:
    return by_type(await items(store), "MEMBER")


def ledger(_kind: str, plan: Planned) -> bool:
    """A call on an Idempotency-Key's record."""
    if not isinstance(plan, Put | Get):
        return False
    key = plan.item if isinstance(plan, Put) else plan.key
    return any(str(value).startswith("~KEYGRAPH#") for value in key.values())


def written(kind: str, _plan: Planned) -> bool:
    return kind == "TransactWriteItems"


async def test_a_mutation_cut_after_its_write_landed_is_not_applied_twice(
    social: tuple[httpx.AsyncClient, Stalling],
) -> None:
    client, stalling = social
    stalling.after = written  # the transaction lands; its answer never comes
    cut = await send(client, CREATE, "k-landed")
    assert (cut.status_code, cut_code(cut)) == (504, "TIMEOUT")
    assert stalling.cancelled == 1
    stalling.after = lambda _kind, _plan: False
    assert [m["handle"] for m in await members(stalling.inner)] == ["ann"]  # whole
    for _ in range(2):
        retry = await send(client, CREATE, "k-landed")
        assert (retry.status_code, cut_code(retry)) == (409, "IDEMPOTENCY_OUTCOME_UNKNOWN")
        assert retry.headers["idempotent-replayed"] == "true"
    assert len(await members(stalling.inner)) == 1
    other = await send(client, RENAME, "k-other")  # a new key runs
    assert other.json()["data"]["updateMember"]["member"] == {"handle": "bea", "version": 2}


async def test_a_mutation_cut_before_it_wrote_runs_on_its_retry(
    social: tuple[httpx.AsyncClient, Stalling],
) -> None:
    client, stalling = social
    made = await send(client, CREATE, "k-made")
    assert made.json()["data"]["createMember"]["member"] == {"handle": "ann", "version": 1}
    stalling.before = lambda kind, plan: kind == "GetItem" and not ledger(kind, plan)
    before = len(stalling.kinds)
    cut = await send(client, RENAME, "k-read")  # cut at its read, before its write
    assert (cut.status_code, cut_code(cut)) == (504, "TIMEOUT")
    assert stalling.kinds[before:] == ["PutItem", "GetItem", "DeleteItem"]  # claim, given up
    stalling.before = lambda _kind, _plan: False
    assert [m["handle"] for m in await members(stalling.inner)] == ["ann"]
    retry = await send(client, RENAME, "k-read")
    assert retry.status_code == 200, retry.text
    assert retry.json()["data"]["updateMember"]["member"] == {"handle": "bea", "version": 2}
    assert "idempotent-replayed" not in retry.headers
    again = await send(client, RENAME, "k-read")  # now kept
    assert (again.content, again.headers["idempotent-replayed"]) == (retry.content, "true")


async def test_a_mutation_cut_while_claiming_gives_its_claim_up(
    social: tuple[httpx.AsyncClient, Stalling],
) -> None:
    client, stalling = social
    stalling.after = lambda kind, plan: kind == "PutItem" and ledger(kind, plan)
    cut = await send(client, CREATE, "k-claim")  # the claim landed; its answer never came
    assert (cut.status_code, cut_code(cut)) == (504, "TIMEOUT")
    assert "TransactWriteItems" not in stalling.kinds
    stalling.after = lambda _kind, _plan: False
    retry = await send(client, CREATE, "k-claim")
    assert retry.status_code == 200, retry.text
    assert retry.json()["data"]["createMember"]["member"] == {"handle": "ann", "version": 1}
    assert len(await members(stalling.inner)) == 1


@pytest.mark.parametrize("value", ["0", "-1", "soon", "inf", "nan"])
def test_a_request_timeout_that_cannot_work_is_refused(tmp_path: Path, value: str) -> None:
    with pytest.raises(ValueError, match="KEYGRAPH_REQUEST_TIMEOUT"):
        request_settings({"KEYGRAPH_REQUEST_TIMEOUT": value})
    with pytest.raises(SettingsError, match="KEYGRAPH_REQUEST_TIMEOUT"):
        load_settings({"KEYGRAPH_DATA_DIR": str(tmp_path), "KEYGRAPH_REQUEST_TIMEOUT": value})


def test_both_commands_read_the_request_timeout_alike(tmp_path: Path) -> None:
    assert request_settings({}) == RequestSettings(REQUEST_TIMEOUT)
    assert request_settings({"KEYGRAPH_REQUEST_TIMEOUT": ""}).request_timeout == REQUEST_TIMEOUT
    given = {"KEYGRAPH_DATA_DIR": str(tmp_path), "KEYGRAPH_REQUEST_TIMEOUT": "2.5"}
    assert request_settings(given).request_timeout == 2.5
    assert load_settings(given).limits.request_timeout == 2.5
    assert isinstance(load_settings(given).limits, RequestSettings)


def test_keygraph_serve_takes_its_timeout_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = CASES / "webshop" / "spec.toml"
    argv = ["serve", "--spec", str(spec), "--db", str(tmp_path / "db.sqlite3")]
    monkeypatch.setenv("KEYGRAPH_REQUEST_TIMEOUT", "7.5")
    assert serve_cli._options(parser().parse_args(argv))["request_timeout"] == 7.5
    monkeypatch.setenv("KEYGRAPH_REQUEST_TIMEOUT", "never")
    assert main(argv) == 2
    assert "KEYGRAPH_REQUEST_TIMEOUT must be a number, not 'never'" in capsys.readouterr().err
    store = EmbeddedStore(TABLE, path=tmp_path / "db")
    try:
        with pytest.raises(ValueError, match="request_timeout must be positive"):
            served("generated", store, SECRET, request_timeout=0)
    finally:
        asyncio.run(store.close())

"""OpenTelemetry traces of `keygraph serve`'s app, in process on this repository's spec and
its seed data: a span per request named by its operation, continuing the caller's W3C trace;
below it a span per wave of store calls; below each wave a span per store call with its
pattern, keys and units. Sampling follows KEYGRAPH_TRACE_SAMPLE (0 keeps nothing a caller
did not ask for), a broken traceparent starts a trace of its own, and with tracing off
nothing is recorded and OpenTelemetry is never loaded."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from codegen.cli import main
from generated.table import TABLE
from keygraph.errors import StoreUnavailable
from keygraph.serve.package import extension_at, served
from keygraph.serve.patterns import Patterns
from keygraph.serve.secret import SECRET_ENV
from keygraph.serve.trace_provider import tracer_provider
from keygraph.serve.trace_settings import TraceSettings, trace_settings
from keygraph.store import Store
from keygraph.stores.counting import CountingStore
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.stores.view import Planned, StoreView
from keygraph.tokens import issue
from server.seed.tenant import SeedSizes, seed
from tests.keygraph.api.conftest import ROOT, SECRET, bearer, post, served_client
from tests.keygraph.api.serving import keygraph_serve, unreported

R = TypeVar("R")
PATTERNS = Patterns.load(ROOT / "access_patterns.toml")
SIZES = SeedSizes(users=6, orders=6, groups=3, org_nodes=3, org_depth=2, shops=1, max_members=4)
TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
GROUPS = "query Groups { users { edges { node { name groups { edges { node { name } } } } } } }"
NAMES = "query Names { users { edges { node { name } } } }"


@pytest.fixture
async def seeded(tmp_path: Path) -> AsyncIterator[Store]:
    """This repository's table on a fresh embedded store, with a tenant's seed data."""
    store = EmbeddedStore(TABLE, path=tmp_path / "keygraph.sqlite3")
    await seed(store, "acme", SIZES, progress=False)
    try:
        yield store
    finally:
        await store.close()


def in_memory(
    provider: TracerProvider | None = None,
) -> tuple[TracerProvider, InMemorySpanExporter]:
    """A provider (a new one keeping every trace, unless given) whose spans are kept here."""
    provider = provider or TracerProvider()
    exporter = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


@asynccontextmanager
async def client_of(
    store: Store, provider: TracerProvider | None
) -> AsyncIterator[httpx.AsyncClient]:
    """A client of `keygraph serve`'s app for the generated package and its extension on
    `store`, its spans going to `provider`."""
    extension = extension_at("server.extension", "generated")
    app = served(
        "generated",
        store,
        SECRET,
        [extension],
        tracer_provider=provider,
        pattern_of=PATTERNS.of_call,
    )
    async with served_client(app) as client:
        yield client


async def ask(client: httpx.AsyncClient, query: str, **headers: str) -> dict[str, Any]:
    response = await post(client, {"query": query}, **bearer(), **headers)
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    return body


def children(spans: list[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    found = [
        s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id
    ]
    return sorted(found, key=lambda s: s.start_time or 0)


def requests_of(spans: list[ReadableSpan]) -> list[ReadableSpan]:
    return [s for s in spans if s.kind is trace.SpanKind.SERVER]


async def test_a_request_traces_its_waves_and_store_calls(seeded: Store) -> None:
    provider, exporter = in_memory()
    counted = CountingStore(seeded)
    async with client_of(counted, provider) as client:
        body = await ask(client, GROUPS)
    assert "errors" not in body, body
    assert any(nodes["node"]["groups"]["edges"] for nodes in body["data"]["users"]["edges"])
    spans = list(exporter.get_finished_spans())
    (request,) = requests_of(spans)
    assert request.name == "Groups"
    assert request.parent is None
    attributes = request.attributes or {}
    assert attributes["graphql.operation.name"] == "Groups"
    assert attributes["http.response.status_code"] == 200
    assert attributes["keygraph.code"] == "OK"
    assert attributes["url.path"] == "/graphql"
    assert (attributes["keygraph.store_waves"], attributes["keygraph.store_calls"]) == (2, 2)

    waves = children(spans, request)
    assert [w.name for w in waves] == ["wave 1", "wave 2"]
    calls = [call for wave in waves for call in children(spans, wave)]
    assert [c.name for c in calls] == ["Query list_users", "BatchGetItem get_groups"]
    assert len(calls) == counted.calls == len(spans) - 3  # every span is one of those
    assert all(c.kind is trace.SpanKind.CLIENT for c in calls)
    listed, batch = (c.attributes or {} for c in calls)
    assert listed["db.operation.name"] == "Query"
    assert listed["aws.dynamodb.index_name"] == "GSI1"
    assert listed["keygraph.items"] == SIZES.users
    assert float(listed["keygraph.read_units"]) > 0  # type: ignore[arg-type]
    assert batch["keygraph.keys"] == batch["keygraph.items"] == SIZES.groups
    for wave in waves:  # a wave spans its calls
        inside = children(spans, wave)
        assert wave.start_time is not None
        assert wave.end_time is not None
        assert wave.start_time <= min(c.start_time or 0 for c in inside)
        assert wave.end_time >= max(c.end_time or 0 for c in inside)


async def test_a_traceparent_makes_the_request_a_child_of_the_callers_trace(
    seeded: Store,
) -> None:
    provider, exporter = in_memory()
    async with client_of(seeded, provider) as client:
        await ask(client, NAMES, traceparent=f"00-{TRACE_ID}-{PARENT_ID}-01")
    spans = list(exporter.get_finished_spans())
    (request,) = requests_of(spans)
    assert format(request.context.trace_id, "032x") == TRACE_ID
    assert request.parent is not None
    assert format(request.parent.span_id, "016x") == PARENT_ID
    assert {format(s.context.trace_id, "032x") for s in spans} == {TRACE_ID}
    assert [s.name for s in spans if s.kind is trace.SpanKind.CLIENT] == ["Query list_users"]


@pytest.mark.parametrize(
    "traceparent",
    [
        "garbage",
        f"00-{'0' * 32}-{PARENT_ID}-01",  # an invalid trace id
        f"00-{TRACE_ID}-{'0' * 16}-01",  # an invalid parent
        f"00-{TRACE_ID.upper()}-{PARENT_ID}-01",
        f"00-{TRACE_ID}-{PARENT_ID}-01" + "-x" * 4000,
        "\u00ff" * 64,
    ],
)
async def test_a_broken_traceparent_starts_a_trace_of_its_own(
    seeded: Store, traceparent: str
) -> None:
    provider, exporter = in_memory()
    async with client_of(seeded, provider) as client:
        response = await client.post(
            "/graphql",
            json={"query": NAMES},
            headers=[
                (name.encode(), value.encode("latin-1"))
                for name, value in {**bearer(), "traceparent": traceparent}.items()
            ],
        )
    assert response.status_code == 200, response.text
    (request,) = requests_of(list(exporter.get_finished_spans()))
    assert request.parent is None
    assert format(request.context.trace_id, "032x") not in (TRACE_ID, "0" * 32)


async def test_a_sample_of_0_keeps_only_what_a_caller_asks_for(
    seeded: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = trace_settings({"KEYGRAPH_TRACING": "true", "KEYGRAPH_TRACE_EXPORTER": "console"})
    assert settings == TraceSettings(tracing=True, trace_exporter="console")
    unsampled = TraceSettings(tracing=True, trace_exporter="console", trace_sample=0)
    provider = tracer_provider(unsampled)
    assert isinstance(provider, TracerProvider)
    provider, exporter = in_memory(provider)
    try:
        async with client_of(seeded, provider) as client:
            body = await ask(client, GROUPS)
            assert body["data"]["users"]["edges"]
            provider.force_flush()
            assert exporter.get_finished_spans() == ()
            assert capsys.readouterr().out == ""
            unwanted = f"00-{TRACE_ID}-{PARENT_ID}-00"  # the caller keeps none either
            await ask(client, GROUPS, traceparent=unwanted)
            provider.force_flush()
            assert exporter.get_finished_spans() == ()
            await ask(client, GROUPS, traceparent=f"00-{TRACE_ID}-{PARENT_ID}-01")
    finally:
        provider.shutdown()
    spans = exporter.get_finished_spans()
    assert [s.name for s in requests_of(list(spans))] == ["Groups"]
    assert len(spans) == 5  # the request, two waves, two calls
    assert capsys.readouterr().out.count(f'"trace_id": "0x{TRACE_ID}"') == 5


async def test_spans_go_where_the_settings_say(
    seeded: Store, capsys: pytest.CaptureFixture[str]
) -> None:
    variables = {"KEYGRAPH_TRACING": "yes", "KEYGRAPH_TRACE_EXPORTER": "console"}
    provider = tracer_provider(trace_settings({**variables, "KEYGRAPH_TRACE_SERVICE": "shop-api"}))
    assert isinstance(provider, TracerProvider)
    try:
        async with client_of(seeded, provider) as client:
            await ask(client, NAMES)
    finally:
        provider.shutdown()  # sends the batch
    printed = capsys.readouterr().out
    assert '"name": "Names"' in printed
    assert '"name": "Query list_users"' in printed
    assert '"service.name": "shop-api"' in printed


class Unavailable(StoreView):
    """Every Query fails as an unreachable store's would."""

    async def _call(self, kind: str, plan: Planned, call: Callable[[], Awaitable[R]]) -> R:
        if kind == "Query":
            raise StoreUnavailable("the store is not there", applied=False)
        return await call()


async def test_a_failed_call_marks_its_span_and_the_request(seeded: Store) -> None:
    provider, exporter = in_memory()
    async with client_of(Unavailable(seeded), provider) as client:
        body = await ask(client, NAMES)
    assert body["errors"][0]["extensions"]["code"] == "STORE_UNAVAILABLE"
    spans = list(exporter.get_finished_spans())
    (request,) = requests_of(spans)
    assert (request.attributes or {})["keygraph.code"] == "STORE_UNAVAILABLE"
    (call,) = [s for s in spans if s.kind is trace.SpanKind.CLIENT]
    assert call.status.status_code is trace.StatusCode.ERROR
    assert [e.name for e in call.events] == ["exception"]


async def test_an_idempotency_keys_record_hangs_from_the_request(seeded: Store) -> None:
    provider, exporter = in_memory()
    create = 'mutation Create { createGroup(input: {name: "g"}) { name } }'
    admin = {"authorization": f"Bearer {issue(SECRET, 'acme', 'u1', roles=['admin'])}"}
    async with client_of(seeded, provider) as client:
        answered = await post(client, {"query": create}, **admin, **{"idempotency-key": "k1"})
    body = answered.json()
    assert body["data"]["createGroup"] == {"name": "g"}, body
    spans = list(exporter.get_finished_spans())
    (request,) = requests_of(spans)
    assert request.name == "Create"
    below = children(spans, request)  # the claim, the operation's wave, the answer kept
    assert [s.name for s in below] == ["PutItem other", "wave 1", "UpdateItem other"]
    assert [c.name for c in children(spans, below[1])] == ["TransactWriteItems transaction"]


@pytest.mark.parametrize(
    "variables",
    [
        {"KEYGRAPH_TRACING": "maybe"},
        {"KEYGRAPH_TRACE_SAMPLE": "1.5"},
        {"KEYGRAPH_TRACE_SAMPLE": "-0.1"},
        {"KEYGRAPH_TRACE_SAMPLE": "nan"},
        {"KEYGRAPH_TRACE_SAMPLE": "half"},
        {"KEYGRAPH_TRACE_EXPORTER": "zipkin"},
    ],
)
def test_trace_settings_that_cannot_work_are_refused(variables: dict[str, str]) -> None:
    with pytest.raises(ValueError, match=next(iter(variables))):
        trace_settings({"KEYGRAPH_TRACING": "true", **variables})


def test_tracing_is_off_unless_asked_for() -> None:
    assert trace_settings({}) == TraceSettings()
    assert tracer_provider(trace_settings({"KEYGRAPH_TRACING": ""})) is None
    assert tracer_provider(trace_settings({"KEYGRAPH_TRACING": "false"})) is None
    assert trace_settings({"KEYGRAPH_TRACING": "FALSE", "KEYGRAPH_TRACE_SAMPLE": "0"}) == (
        TraceSettings(trace_sample=0)
    )


def test_keygraph_serve_refuses_trace_settings_that_cannot_work(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KEYGRAPH_TRACING", "true")
    monkeypatch.setenv("KEYGRAPH_TRACE_SAMPLE", "2")
    spec = ROOT / "tests" / "codegen" / "cases" / "webshop" / "spec.toml"
    assert main(["serve", "--spec", str(spec), "--db", str(tmp_path / "db.sqlite3")]) == 2
    assert "KEYGRAPH_TRACE_SAMPLE must be in [0, 1], not 2.0" in capsys.readouterr().err


LOADED = """
import asyncio, sys
import httpx
from keygraph.serve import create_app
from keygraph.serve.package import served
from keygraph.serve.secret import SECRET_ENV
from keygraph.serve.trace_provider import tracer_provider
from keygraph.serve.trace_settings import trace_settings
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.tokens import issue
from generated.table import TABLE

async def main():
    store = EmbeddedStore(TABLE, path=sys.argv[1])
    provider = tracer_provider(trace_settings())
    app = create_app(served("generated", store, sys.argv[2], tracer_provider=provider))
    token = issue(sys.argv[2], "acme", "u1", roles=["member"])
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://serve.test") as client:
        answer = await client.post(
            "/graphql",
            json={"query": "query Names { users { edges { node { name } } } }"},
            headers={"authorization": f"Bearer {token}"},
        )
    assert answer.status_code == 200, answer.text
    await store.close()
    if provider is not None:
        provider.shutdown()
    print("loaded:", ",".join(sorted(m for m in sys.modules if m.startswith("opentelemetry"))))

asyncio.run(main())
"""


def served_once(tmp_path: Path, **variables: str) -> str:
    """What a process printing its spans prints, having answered one query with `keygraph
    serve`'s app under `variables`, and then the OpenTelemetry modules it loaded."""
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(ROOT), **variables}
    db = tmp_path / "keygraph.sqlite3"
    run = subprocess.run(
        [sys.executable, "-c", LOADED, str(db), SECRET],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
    return run.stdout


def test_tracing_off_records_nothing_and_loads_no_opentelemetry(tmp_path: Path) -> None:
    assert served_once(tmp_path, KEYGRAPH_TRACE_EXPORTER="console") == "loaded: \n"
    traced = served_once(tmp_path, KEYGRAPH_TRACING="1", KEYGRAPH_TRACE_EXPORTER="console")
    assert '"name": "Names"' in traced
    assert '"name": "Query list_users"' not in traced  # started with no spec: no patterns
    assert '"name": "Query other"' in traced
    assert traced.splitlines()[-1].startswith("loaded: opentelemetry")


def test_keygraph_serve_traces_as_its_environment_says(tmp_path: Path) -> None:
    spec = ROOT / "tests" / "codegen" / "cases" / "webshop" / "spec.toml"
    env = {
        SECRET_ENV: SECRET,
        "KEYGRAPH_TRACING": "true",
        "KEYGRAPH_TRACE_EXPORTER": "console",
        "KEYGRAPH_TRACE_SERVICE": "shop-api",
    }
    db = tmp_path / "db.sqlite3"
    with keygraph_serve("--spec", spec, "--db", db, cwd=tmp_path, env=env) as url:
        answer = httpx.post(
            f"{url}/graphql",
            json={"query": 'query Tea { product(sku: "TEA") { title } }'},
            headers={**bearer(), "traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"},
        )
        assert unreported(answer.json()) == {"data": {"product": None}}
    printed = (tmp_path / "serve.log").read_text()  # the spans left, sent as it stopped
    assert '"name": "Tea"' in printed
    assert '"name": "GetItem product"' in printed  # its spec's patterns name the calls
    assert f'"parent_id": "0x{PARENT_ID}"' in printed
    assert '"service.name": "shop-api"' in printed

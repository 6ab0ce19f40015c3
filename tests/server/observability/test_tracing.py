"""Traces through the app, on both executors: a span per request named by its operation,
continuing the caller's W3C trace; below it a span per wave, as many as the response's
storeWaves; below each wave a span per store call with its pattern, keys and units."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from generated.table import TABLE
from server.settings import ExecutorKind, SettingsError, load_settings
from tests.conftest import StoreFactory
from tests.server.conftest import SECRET
from tests.server.observability.helpers import admin_token, app_client, settings_for

TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736"
PARENT_ID = "00f067aa0ba902b7"
Q3 = (
    "query Q3 { users(first: 5) { edges { node { id name"
    " orders(first: 5) { edges { node { id status items { sku } } } }"
    " groups { edges { node { id name } } } } } } }"
)
CREATE_USER = 'mutation($e: String!) { createUser(input: {email: $e, name: "A"}) { id } }'
CREATE_ORDER = """mutation($u: ID!) { createOrder(input: {userId: $u, currency: "EUR",
  items: [{sku: "s", name: "n", quantity: 1, unitPriceCents: 5}]}) { id } }"""
CREATE_GROUP = 'mutation { createGroup(input: {name: "g"}) { id } }'
ADD_MEMBER = "mutation($g: ID!, $u: ID!) { addGroupMember(groupId: $g, userId: $u) { id } }"


async def post(
    client: httpx.AsyncClient,
    token: str,
    query: str,
    variables: dict[str, Any] | None = None,
    headers: dict[str, str] | None = None,
) -> dict[str, Any]:
    response = await client.post(
        "/graphql",
        json={"query": query, "variables": variables or {}},
        headers={"Authorization": f"Bearer {token}", **(headers or {})},
    )
    assert response.status_code == 200, response.text
    body: dict[str, Any] = response.json()
    assert "errors" not in body, body
    return body


async def seed(client: httpx.AsyncClient, token: str) -> None:
    group = (await post(client, token, CREATE_GROUP))["data"]["createGroup"]["id"]
    for n in range(3):
        created = await post(client, token, CREATE_USER, {"e": f"u{n}@example.com"})
        user = created["data"]["createUser"]["id"]
        await post(client, token, CREATE_ORDER, {"u": user})
        await post(client, token, ADD_MEMBER, {"g": group, "u": user})


def children(spans: list[ReadableSpan], parent: ReadableSpan) -> list[ReadableSpan]:
    return [s for s in spans if s.parent is not None and s.parent.span_id == parent.context.span_id]


def pattern_of(span: ReadableSpan) -> str:
    return str((span.attributes or {})["keygraph.pattern"])


@pytest.mark.parametrize("executor", ["compiled", "strawberry"])
async def test_a_request_traces_its_waves_and_store_calls(
    tmp_path: Path, executor: ExecutorKind
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = settings_for(tmp_path, tracing=True, trace_exporter="console", executor=executor)
    token = admin_token(settings)
    async with app_client(settings, provider=provider) as client:
        await seed(client, token)
        exporter.clear()
        traceparent = {"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-01"}
        body = await post(client, token, Q3, headers=traceparent)
    spans = list(exporter.get_finished_spans())
    (request,) = [s for s in spans if s.name == "Q3"]
    assert request.kind is trace.SpanKind.SERVER
    assert format(request.context.trace_id, "032x") == TRACE_ID
    assert request.parent is not None
    assert format(request.parent.span_id, "016x") == PARENT_ID
    assert request.attributes is not None
    assert request.attributes["graphql.operation.name"] == "Q3"
    assert request.attributes["keygraph.code"] == "OK"
    assert request.attributes["http.response.status_code"] == 200

    waves = sorted(children(spans, request), key=lambda s: s.start_time or 0)
    assert [w.name for w in waves] == [f"wave {n + 1}" for n in range(len(waves))]
    assert len(waves) == body["extensions"]["storeWaves"]
    calls = [call for wave in waves for call in children(spans, wave)]
    assert len(calls) == body["extensions"]["storeCalls"]
    assert all(c.kind is trace.SpanKind.CLIENT for c in calls)
    patterns = [
        {str((c.attributes or {})["keygraph.pattern"]) for c in children(spans, w)} for w in waves
    ]
    assert patterns[0] == {"list_users"}
    assert set().union(*patterns[1:]) == {"user_orders", "get_groups"}
    first = children(spans, waves[0])[0].attributes or {}
    assert first["db.operation.name"] == "Query"
    assert first["aws.dynamodb.index_name"] == "GSI1"
    assert first["keygraph.items"] == 3
    assert float(first["keygraph.read_units"]) > 0  # type: ignore[arg-type]
    (batch,) = [c.attributes or {} for c in calls if pattern_of(c) == "get_groups"]
    assert batch["db.operation.name"] == "BatchGetItem"
    assert batch["keygraph.keys"] == 1
    for wave in waves:  # a wave spans its calls
        inside = children(spans, wave)
        assert wave.start_time is not None
        assert wave.end_time is not None
        assert wave.start_time <= min(c.start_time or 0 for c in inside)
        assert wave.end_time >= max(c.end_time or 0 for c in inside)


async def test_without_a_traceparent_a_request_starts_its_own_trace(tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = settings_for(tmp_path, tracing=True, trace_exporter="console")
    async with app_client(settings, provider=provider) as client:
        await post(client, admin_token(settings), "query Me { viewer { tenant } }")
    (request,) = exporter.get_finished_spans()
    assert request.name == "Me"
    assert request.parent is None


async def test_tracing_is_off_by_default(tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = settings_for(tmp_path)
    async with app_client(settings, provider=provider) as client:
        await post(client, admin_token(settings), "query Me { viewer { tenant } }")
    assert not settings.tracing
    assert exporter.get_finished_spans() == ()


def test_trace_settings_are_checked() -> None:
    env = {"KEYGRAPH_JWT_SECRET": SECRET, "KEYGRAPH_TRACING": "true"}
    settings = load_settings({**env, "KEYGRAPH_TRACE_SAMPLE": "0.25"})
    assert settings.tracing
    assert settings.trace_sample == 0.25
    assert settings.trace_exporter == "otlp"  # the exporter is installed with the dev extra
    with pytest.raises(SettingsError):
        load_settings({"KEYGRAPH_TRACING": "maybe"})
    assert load_settings({**env, "KEYGRAPH_TRACE_SAMPLE": "0"}).trace_sample == 0
    with pytest.raises(SettingsError):
        load_settings({"KEYGRAPH_TRACE_SAMPLE": "1.5"})
    with pytest.raises(SettingsError):
        load_settings({"KEYGRAPH_TRACE_SAMPLE": "some"})
    with pytest.raises(SettingsError):
        load_settings({"KEYGRAPH_TRACE_EXPORTER": "zipkin"})


def test_the_otlp_exporter_must_be_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(
        "keygraph.serve.trace_settings.OTLP_EXPORTER", "no_such_package.trace_exporter"
    )
    env = {"KEYGRAPH_JWT_SECRET": SECRET, "KEYGRAPH_TRACING": "true"}
    with pytest.raises(SettingsError, match=r"keygraph\[otlp\]"):
        load_settings(env)
    assert load_settings({**env, "KEYGRAPH_TRACE_EXPORTER": "console"}).tracing


async def test_spans_go_where_the_settings_say(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    settings = settings_for(tmp_path, tracing=True, trace_exporter="console")
    async with app_client(settings) as client:
        await post(client, admin_token(settings), "query Me { viewer { tenant } }")
    printed = capsys.readouterr().out  # sent in a batch, at the latest when the app stops
    assert '"name": "Me"' in printed
    assert '"service.name": "keygraph"' in printed


async def test_an_unsampled_request_records_no_spans(tmp_path: Path) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = settings_for(tmp_path, tracing=True, trace_exporter="console")
    token = admin_token(settings)
    unsampled = {"traceparent": f"00-{TRACE_ID}-{PARENT_ID}-00"}  # the caller keeps none
    async with app_client(settings, provider=provider) as client:
        await seed(client, token)
        exporter.clear()
        body = await post(client, token, Q3, headers=unsampled)
    assert body["extensions"]["storeCalls"] > 0
    assert exporter.get_finished_spans() == ()


@pytest.mark.dynamodb_local
async def test_store_spans_carry_dynamodb_consumed_units(
    tmp_path: Path, store_factory: StoreFactory
) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    settings = settings_for(tmp_path, tracing=True, trace_exporter="console")
    token = admin_token(settings)
    store = await store_factory("dynamodb-local", TABLE)
    async with app_client(settings, provider=provider, store=store) as client:
        await seed(client, token)
        exporter.clear()
        body = await post(client, token, Q3)
    spans = list(exporter.get_finished_spans())
    (request,) = [s for s in spans if s.name == "Q3"]
    calls = [s for s in spans if s.kind is trace.SpanKind.CLIENT]
    assert len(calls) == body["extensions"]["storeCalls"]
    units = [float((c.attributes or {})["keygraph.read_units"]) for c in calls]  # type: ignore[arg-type]
    assert all(u > 0 for u in units)  # as DynamoDB reported them (ReturnConsumedCapacity)
    assert sum(units) == body["extensions"]["cost"]["actual"]["readUnits"]
    assert (request.attributes or {})["keygraph.read_units"] == sum(units)

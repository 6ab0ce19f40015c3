"""What metrics and traces cost a request: Q1 and Q3 on apps that differ only in their
observability settings, over one seeded store in one process, requests alternating between
the apps round by round (the order reversed every other round), on each executor of the
compiled API (compiled, graphql-core).

The arms: `off` (the defaults: nothing observed), `off_again` (a second app built the same
way: the noise floor of the comparison), `metrics` (Prometheus metrics on), `tracing`
(every request traced; spans go through the SDK's synchronous processor to an exporter that
drops them, so their whole cost lands in the request that made them), `sampled` (tracing on,
1% of requests kept) and `both` (metrics, and every request traced). A request's
cost is the process CPU time it takes. Prints one JSON object and writes
bench/results/observability-embedded.json; bench/README.md records it.

`python -m bench observability [--rounds N]`
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult
from opentelemetry.sdk.trace.sampling import ParentBased, TraceIdRatioBased

from bench.asgi import AsgiClient
from bench.by_executor import command_line, run_by_executor
from bench.queries import Q1, Q3
from bench.targets import Executor, auth_headers, compiled_app, production_settings
from keygraph.stores.embedded.store import EmbeddedStore
from server.seed.tenant import SeedSizes
from server.settings import Settings

TENANT = "bench"
SIZES = SeedSizes(users=60, orders=150, groups=5, org_nodes=5, org_depth=2, shops=5)
RESULTS = Path(__file__).with_name("results") / "observability-embedded.json"
FIRST_USER = "{ users(first: 1) { edges { node { id } } } }"
METRICS_TOKEN = "bench-metrics-token-0123456789"
ARMS = ("off", "off_again", "metrics", "tracing", "sampled", "both")
SAMPLED = 0.01
"""The `sampled` arm's share of traces kept."""


class Dropped(SpanExporter):
    """Takes finished spans and keeps none."""

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        return SpanExportResult.SUCCESS


def _provider(settings: Settings) -> TracerProvider:
    provider = TracerProvider(sampler=ParentBased(TraceIdRatioBased(settings.trace_sample)))
    provider.add_span_processor(SimpleSpanProcessor(Dropped()))
    return provider


def _settings(base: Settings, arm: str) -> Settings:
    metrics = arm in ("metrics", "both")
    tracing = arm in ("tracing", "sampled", "both")
    return replace(
        base,
        metrics_token=METRICS_TOKEN if metrics else None,
        tracing=tracing,
        trace_sample=SAMPLED if arm == "sampled" else 1.0,
        trace_exporter="console",  # replaced: the bench gives its own provider
    ).resolved()


async def _cpu(client: AsgiClient, body: dict[str, Any]) -> float:
    started = time.process_time()
    answer = await client.post("/graphql", json=body)
    taken = time.process_time() - started
    assert answer.status_code == 200, answer.text
    assert b'"errors"' not in answer.content, answer.text
    return taken


async def alternate(
    clients: dict[str, AsgiClient], body: dict[str, Any], rounds: int
) -> dict[str, Any]:
    """Median and mean CPU time (µs) per request of each arm, one of each per round, and
    each arm's median over `off`'s."""
    names = list(clients)
    taken: dict[str, list[float]] = {name: [] for name in names}
    for warm in range(20 * len(names)):
        await _cpu(clients[names[warm % len(names)]], body)
    for round_ in range(rounds):
        for name in names if round_ % 2 == 0 else reversed(names):
            taken[name].append(await _cpu(clients[name], body))
    result: dict[str, Any] = {"rounds": rounds}
    base = statistics.median(taken["off"])
    for name in names:
        result[f"{name}_p50_us"] = round(statistics.median(taken[name]) * 1e6, 1)
        result[f"{name}_mean_us"] = round(statistics.fmean(taken[name]) * 1e6, 1)
    for name in names[1:]:
        result[f"{name}_over_off"] = round(statistics.median(taken[name]) / base, 3)
    return result


async def _executor(
    store: EmbeddedStore, data: Path, executor: Executor, rounds: int
) -> dict[str, Any]:
    base = production_settings(data)
    clients: dict[str, AsgiClient] = {}
    for arm in ARMS:
        settings = _settings(base, arm)
        provider = _provider(settings) if settings.tracing else None
        app = compiled_app(settings, store, executor, tracer_provider=provider)
        clients[arm] = AsgiClient(app, auth_headers(settings, TENANT))
    first = await clients["off"].post("/graphql", json={"query": FIRST_USER})
    user_id = first.json()["data"]["users"]["edges"][0]["node"]["id"]
    return {
        f"Q1, {executor}": await alternate(
            clients, {"query": Q1, "variables": {"id": user_id}}, rounds
        ),
        f"Q3, {executor}": await alternate(clients, {"query": Q3}, max(1, rounds // 10)),
    }


async def run(rounds: int) -> dict[str, Any]:
    return await run_by_executor(SIZES, TENANT, _executor, rounds)


def main(argv: Sequence[str]) -> None:
    command_line("observability", __doc__, run, RESULTS, argv)

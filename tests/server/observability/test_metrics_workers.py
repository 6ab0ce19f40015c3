"""`serve --workers 2`: a scrape of either worker reports the requests both answered, and a
metrics port of its own serves the same without a token."""

from __future__ import annotations

import asyncio
import signal
from pathlib import Path

import httpx
import pytest
from prometheus_client.mmap_dict import MmapedDict
from prometheus_client.parser import text_string_to_metric_families

from keygraph.stores.dynamodb.local import free_port
from tests.server.observability.helpers import TOKEN
from tests.server.serving.test_serve import Server

PING = {"query": "query Ping { viewer { tenant } }"}
MAX_REQUESTS = 400


def writers(shared: Path) -> set[str]:
    """The worker processes that answered a Ping (from their files of values)."""
    return {
        path.stem.rpartition("_")[2]
        for path in shared.glob("histogram_*.db")
        if any(
            '"Ping"' in key and value > 0
            for key, value, _, _ in MmapedDict.read_all_values_from_file(str(path))  # type: ignore[no-untyped-call]
        )
    }


def pings(text: str) -> float:
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "keygraph_request_duration_seconds_count" and sample.labels == {
                "operation": "Ping",
                "code": "OK",
            }:
                return sample.value
    return 0.0


async def test_workers_metrics_add_up(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    shared = tmp_path / "metrics"
    shared.mkdir()
    metrics_port = free_port()
    monkeypatch.setenv("KEYGRAPH_METRICS_TOKEN", TOKEN)
    monkeypatch.setenv("KEYGRAPH_METRICS_PORT", str(metrics_port))
    monkeypatch.setenv("PROMETHEUS_MULTIPROC_DIR", str(shared))
    server = Server(tmp_path / "data", "--workers", "2")
    monkeypatch.delenv("PROMETHEUS_MULTIPROC_DIR")  # this process's own scrapes stay its own
    try:
        await asyncio.to_thread(server.wait_healthy)
        headers = {"Authorization": f"Bearer {server.token}"}
        limits = httpx.Limits(max_keepalive_connections=0)  # a connection each: both workers
        async with httpx.AsyncClient(base_url=server.url, headers=headers, limits=limits) as c:
            sent = 0
            while sent < MAX_REQUESTS and len(writers(shared)) < 2:  # until both answered
                for _ in range(8):
                    assert (await c.post("/graphql", json=PING)).status_code == 200
                sent += 8
            scrapes = [
                await c.get("/metrics", headers={"Authorization": f"Bearer {TOKEN}"})
                for _ in range(6)
            ]
            unguarded = await c.get(f"http://127.0.0.1:{metrics_port}/metrics")
        assert all(s.status_code == 200 for s in scrapes)
        assert len(writers(shared)) == 2
        assert sent > 0
        assert [pings(s.text) for s in scrapes] == [sent] * len(scrapes)
        assert pings(unguarded.text) == sent
    finally:
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=60)

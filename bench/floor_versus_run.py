"""Timed in-process runs of some operations on keygraph (embedded store) and on the floor,
interleaved request by request, in the checkout it runs in (bench/floor_versus.py starts it
with that checkout as its working directory and import path): only benchmark modules every
checkout since 2026-11-24 has are used. Prints keygraph ÷ floor per repeat as JSON, by the
median wall time and the median CPU time of a request (the floor's over keygraph's: above 1
is faster than the floor)."""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
import time
from pathlib import Path
from statistics import median
from typing import Any

from bench.asgi import AsgiClient
from bench.dataset import TENANTS, load_dataset
from bench.floor_data import load_floor_data
from bench.inprocess import execute
from bench.queries import operations
from bench.stores import store_environment
from bench.targets import auth_headers, bench_settings, floor_app, keygraph_app, open_store
from server.edge.gc_tuning import tune_for_serving
from server.serving.datastack import run_with_headroom


async def _measure(
    data_dir: Path, names: list[str], repeats: int, seconds: float
) -> dict[str, Any]:
    tenant = TENANTS[0]
    dataset = load_dataset("full")
    ops = {op.name: op for op in operations(load_floor_data(dataset.items[tenant], tenant))}
    settings = bench_settings(data_dir, "embedded", None)
    store = open_store(settings)
    headers = auth_headers(settings, tenant)
    clients = {
        "keygraph": AsgiClient(keygraph_app(settings, store, "keygraph"), headers),
        "floor": AsgiClient(floor_app(dataset.items[tenant], tenant), headers),
    }
    tune_for_serving()
    found: dict[str, Any] = {
        name: {
            key: []
            for key in (
                "ratio",
                "cpu_ratio",
                "keygraph_p50",
                "floor_p50",
                "keygraph_cpu",
                "floor_cpu",
            )
        }
        for name in names
    }
    try:
        for name in names:
            for client in clients.values():
                for _ in range(3):
                    await execute(client, ops[name])
        for _ in range(repeats):
            for name in names:
                taken = await _interleaved(clients, ops[name].body(), seconds)
                wall = {variant: median(times[0]) for variant, times in taken.items()}
                cpu = {variant: median(times[1]) for variant, times in taken.items()}
                found[name]["ratio"].append(wall["floor"] / wall["keygraph"])
                found[name]["cpu_ratio"].append(cpu["floor"] / cpu["keygraph"])
                found[name]["keygraph_p50"].append(wall["keygraph"] * 1000)
                found[name]["floor_p50"].append(wall["floor"] * 1000)
                found[name]["keygraph_cpu"].append(cpu["keygraph"] * 1000)
                found[name]["floor_cpu"].append(cpu["floor"] * 1000)
    finally:
        await store.close()
    return found


async def _interleaved(
    clients: dict[str, AsgiClient], body: dict[str, Any], seconds: float
) -> dict[str, tuple[list[float], list[float]]]:
    """Per client, the wall and CPU (this thread's) seconds of each request, the clients
    taking turns request by request for `seconds` each (at least 3 rounds). CPU time is
    what a request costs even when neighbours hold the cores."""
    taken: dict[str, tuple[list[float], list[float]]] = {name: ([], []) for name in clients}
    deadline = time.perf_counter() + seconds * len(clients)
    rounds = 0
    while rounds < 3 or time.perf_counter() < deadline:
        for name, client in clients.items():
            wall, cpu = time.perf_counter(), time.thread_time()
            response = await client.post("/graphql", json=body)
            taken[name][1].append(time.thread_time() - cpu)
            taken[name][0].append(time.perf_counter() - wall)
            if response.status_code != 200 or b'"errors"' in response.content:
                raise RuntimeError(f"{name}: {response.content[:300]!r}")
        rounds += 1
    return taken


def main() -> None:
    names, repeats, seconds = sys.argv[1].split(","), int(sys.argv[2]), float(sys.argv[3])
    dataset = load_dataset("full")
    with (
        tempfile.TemporaryDirectory() as tmp,
        store_environment("embedded", dataset, Path(tmp), progress=False) as (data, _endpoint),
    ):
        found = run_with_headroom(lambda: asyncio.run(_measure(data, names, repeats, seconds)))
    print(json.dumps(found))


if __name__ == "__main__":
    main()

"""Timed in-process runs of some operations on keygraph (embedded store) and on the floor,
interleaved request by request, in the checkout it runs in (bench/floor_versus.py starts it
with that checkout as its working directory and import path): only benchmark modules every
checkout since 2026-11-24 has are used. Prints keygraph ÷ floor per repeat as JSON."""

from __future__ import annotations

import asyncio
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.asgi import AsgiClient
from bench.dataset import TENANTS, load_dataset
from bench.floor_data import load_floor_data
from bench.inprocess import execute, timed_runs
from bench.queries import operations
from bench.stores import store_environment
from bench.targets import auth_headers, bench_settings, floor_app, keygraph_app, open_store
from server.serving.datastack import run_with_headroom
from server.serving.gc_tuning import tune_for_serving


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
        name: {"ratio": [], "keygraph_p50": [], "floor_p50": []} for name in names
    }
    try:
        for name in names:
            for client in clients.values():
                for _ in range(3):
                    await execute(client, ops[name])
        for _ in range(repeats):
            for name in names:
                runs = await timed_runs(clients, ops[name], seconds, 3000, 3)
                found[name]["ratio"].append(runs["keygraph"].rps / runs["floor"].rps)
                found[name]["keygraph_p50"].append(runs["keygraph"].p50_ms)
                found[name]["floor_p50"].append(runs["floor"].p50_ms)
    finally:
        await store.close()
    return found


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

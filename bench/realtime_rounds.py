"""Rounds of the served subscription benchmark (bench/realtime_served.py): a new served
worker for each number of subscribers in each round, the medians of the rounds, and the
machine's load average around each round (the machine is shared). Against a base checkout,
the two workers take turns in each round, so the machine's noise falls on both."""

from __future__ import annotations

import contextlib
import os
import statistics
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import uvloop

from bench.machine import machine_info
from bench.realtime_served import ROOT, SERVER_ENV, Served, measure, raise_fd_limit, serving
from keygraph.stores.dynamodb.local import DynamoDBLocal
from server.settings import Settings

BURST_WRITES = 20
"""Writes back to back for the events a second (on the embedded store)."""


def _median_row(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Each number's median across rounds; the other fields as the first round's."""
    row = dict(rows[0])
    for name, value in rows[0].items():
        if isinstance(value, float | int) and not isinstance(value, bool):
            row[name] = round(statistics.median(each[name] for each in rows), 2)
    return row


async def _measured(
    served: Served, subscribers: int, writes: int, poll: float, burst: int
) -> dict[str, Any]:
    try:
        return await measure(served, subscribers, writes, poll, burst)
    finally:
        await served.store.close()


@contextlib.contextmanager
def _local(kind: str) -> Iterator[DynamoDBLocal | None]:
    if kind == "embedded":
        yield None
        return
    with DynamoDBLocal() as local:
        yield local


def served_runs(kind: str, counts: list[int], writes: int, rounds: int) -> dict[str, Any]:
    """Each number of subscribers in `counts`, `rounds` times, on `kind` ("embedded" or
    "dynamodb-local") at its default poll interval."""
    raise_fd_limit(max(counts))
    poll = Settings(store="embedded" if kind == "embedded" else "dynamodb").poll_interval
    burst = BURST_WRITES if kind == "embedded" else 0
    runs: list[dict[str, Any]] = []
    loads: list[dict[str, Any]] = []
    with _local(kind) as local:
        for number in range(1, rounds + 1):
            before = os.getloadavg()[0]
            for count in counts:
                with serving(kind, poll, local) as served:
                    run = uvloop.run(_measured(served, count, writes, poll, burst))
                runs.append({"round": number, **run})
            loads.append({"round": number, "before": before, "after": os.getloadavg()[0]})
    medians = [
        _median_row([run for run in runs if run["subscribers"] == count]) for count in counts
    ]
    for row in medians:
        del row["round"]
    return {
        "machine": machine_info(),
        "mode": "served: one worker of `python -m server serve`, clients in the bench process",
        "server_env": {name: value for name, value in SERVER_ENV.items() if "SECRET" not in name},
        "load_average_1min": loads,
        "medians": medians,
        "runs": runs,
    }


@contextlib.contextmanager
def _checkout(ref: str) -> Iterator[Path]:
    """A worktree of `ref`, removed on leaving."""
    with tempfile.TemporaryDirectory(prefix="keygraph-base-") as scratch:
        base = Path(scratch) / "base"
        subprocess.run(["git", "worktree", "add", "--detach", "-q", str(base), ref], check=True)
        try:
            yield base
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(base)], check=True)


def paired_runs(base: str, subscribers: int, writes: int, rounds: int) -> dict[str, Any]:
    """`subscribers` on the embedded store, `rounds` times, the worker of the checkout of
    `base` (a git ref) then this one's; the medians of each, and of the rounds' ratios."""
    raise_fd_limit(subscribers)
    poll = Settings(store="embedded").poll_interval
    arms: dict[str, list[dict[str, Any]]] = {"base": [], "this": []}
    loads: list[dict[str, Any]] = []
    with _checkout(base) as checkout:
        for number in range(1, rounds + 1):
            before = os.getloadavg()[0]
            for arm, root in (("base", checkout), ("this", ROOT)):
                with serving("embedded", poll, root=root) as served:
                    run = uvloop.run(_measured(served, subscribers, writes, poll, BURST_WRITES))
                arms[arm].append({"round": number, **run})
            loads.append({"round": number, "before": before, "after": os.getloadavg()[0]})
    medians = {arm: _median_row(runs) for arm, runs in arms.items()}
    ratios: dict[str, dict[str, float]] = {}
    for name, value in medians["base"].items():
        if isinstance(value, float | int) and not isinstance(value, bool) and value:
            each = [t[name] / b[name] for b, t in zip(arms["base"], arms["this"], strict=True)]
            ratios[name] = {
                "median": round(statistics.median(each), 2),
                "low": round(min(each), 2),
                "high": round(max(each), 2),
            }
    for row in medians.values():
        del row["round"]
    return {
        "machine": machine_info(),
        "mode": "served, alternating: the base checkout's worker, then this one's, each round",
        "base": base,
        "load_average_1min": loads,
        "medians": medians,
        "ratio_this_to_base": ratios,
        "runs": arms,
    }

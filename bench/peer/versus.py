"""keygraph against the peer over HTTP on one DynamoDB Local: both servers up at once, first
checked to answer the same data, then loaded in turns, round by round, by a load generator in
its own process. Per operation: the servers' CPU per request, req/s and p50 (medians over the
rounds) and the peer's CPU per request over keygraph's, the median of the per-round ratios."""

from __future__ import annotations

import json
import urllib.request
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from statistics import median
from typing import Any

from bench.measure import same_data
from bench.overhttp import HOST, ServerProcess, Servers, run_loadgen
from bench.queries import Operation

GOALS = {"Q1": 4.0, "Q3": 6.0}
"""How many times less server CPU per request than the peer's keygraph aims to take."""
NAMES = ("keygraph", "peer")


@dataclass(frozen=True)
class Load:
    rounds: int = 5
    seconds: float = 3.0
    concurrency: int = 8
    max_requests: int = 100_000
    warmup: int = 5
    """Unmeasured requests per connection before each timed run."""


def _post(server: ServerProcess, op: Operation, headers: dict[str, str]) -> Any:
    request = urllib.request.Request(
        f"http://{HOST}:{server.port}/graphql",
        data=json.dumps(op.body()).encode(),
        headers={"Content-Type": "application/json", **headers},
    )
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


def check_same(
    servers: dict[str, ServerProcess], ops: Sequence[Operation], headers: dict[str, str]
) -> None:
    """Raise unless both servers answer every operation with the same data and no errors."""
    for op in ops:
        answers = {name: _post(servers[name], op, headers) for name in NAMES}
        for name, answer in answers.items():
            if answer.get("errors") or not answer.get("data"):
                raise RuntimeError(f"{name} failed {op.name}: {json.dumps(answer)[:500]}")
        if not same_data(answers["keygraph"]["data"], answers["peer"]["data"]):
            raise RuntimeError(f"keygraph and the peer answer {op.name} with different data")


def compare(
    endpoint: str,
    data_dir: Path,
    headers: dict[str, str],
    ops: Sequence[Operation],
    load: Load,
    work: Path,
) -> dict[str, Any]:
    """Per operation name: the medians of both servers' CPU ms/req, req/s and p50 ms, and
    `ratios`, each round's ratio of the peer's CPU per request to keygraph's, and `ratio`,
    their median."""
    keygraph = ["--target", "keygraph", "--store", "dynamodb-local", "--data-dir", str(data_dir)]
    servers = Servers(
        [
            ServerProcess("keygraph", [*keygraph, "--endpoint", endpoint], work),
            ServerProcess("peer", ["--target", "peer", "--endpoint", endpoint], work),
        ]
    )
    runs: dict[str, dict[str, list[Any]]] = {op.name: {name: [] for name in NAMES} for op in ops}
    with servers as running:
        check_same(running, ops, headers)
        for number in range(load.rounds):
            order = NAMES if number % 2 == 0 else NAMES[::-1]
            for op in ops:
                for name in order:
                    summary, error = run_loadgen(
                        running[name],
                        op,
                        headers,
                        load.concurrency,
                        load.seconds,
                        load.max_requests,
                        load.warmup,
                    )
                    if summary.errors or summary.cpu_ms is None:
                        raise RuntimeError(f"{name} on {op.name}: {error}")
                    runs[op.name][name].append(summary)
    return {name: _summary(by_server) for name, by_server in runs.items()}


def _summary(by_server: dict[str, list[Any]]) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for name, summaries in by_server.items():
        found[name] = {
            "cpu_ms": median(run.cpu_ms for run in summaries),
            "rps": median(run.rps for run in summaries),
            "p50_ms": median(run.p50_ms for run in summaries),
        }
    pairs = zip(by_server["peer"], by_server["keygraph"], strict=True)
    found["ratios"] = [peer.cpu_ms / ours.cpu_ms for peer, ours in pairs]
    found["ratio"] = median(found["ratios"])
    return found


def table(results: dict[str, Any]) -> str:
    """The results as bench/README's table: CPU first, then req/s and p50."""
    lines = [
        "| op | keygraph CPU ms/req | peer CPU ms/req | peer ÷ keygraph | goal | met? "
        "| keygraph req/s | peer req/s | keygraph p50 ms | peer p50 ms |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for name, found in results.items():
        goal = GOALS.get(name)
        met = "—" if goal is None else ("yes" if found["ratio"] >= goal else "no")
        ours, peer = found["keygraph"], found["peer"]
        lines.append(
            f"| {name} | {ours['cpu_ms']:.2f} | {peer['cpu_ms']:.2f} | {found['ratio']:.2f}x "
            f"| {'—' if goal is None else f'≥ {goal:.0f}x'} | {met} "
            f"| {ours['rps']:.0f} | {peer['rps']:.0f} "
            f"| {ours['p50_ms']:.2f} | {peer['p50_ms']:.2f} |"
        )
    return "\n".join(lines)

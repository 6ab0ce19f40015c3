"""Side-by-side soaks on one DynamoDB Local: each arm is `python -m server serve` with its own
environment (an allocator setting, say) under its own copy of the soak's load, so arms that
run at once share the machine's noise and can be compared as ratios.

Each arm's server serves a tenant of its own (seeded as `--demo` seeds), so one arm's writes
do not grow what another's reads read. Each minute it records the arm's answers so far and
its anonymous memory, split into glibc's main heap and the rest (bench/soak.py memory_kib);
the summary gives each arm's anonymous growth from the first minute's sample to the last,
and that growth per request answered in between.

    python -m bench.soak_ab --minutes 6 base mmap:MALLOC_MMAP_THRESHOLD_=131072
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.loadgen import HOST
from bench.machine import machine_info
from bench.soak import RESULTS, ROOT, memory_kib, wait_ready
from bench.soak_load import SECRET, WRITE_SHARE, Minute, Soak
from generated.table import TABLE
from keygraph.stores.dynamodb import admin
from keygraph.stores.dynamodb.local import (
    LOCAL_KEY_ID,
    LOCAL_REGION,
    LOCAL_SECRET,
    DynamoDBLocal,
    free_port,
)
from keygraph.stores.dynamodb.store import make_client
from server.auth.tokens import issue_token
from server.settings import Settings


@dataclass
class Arm:
    """One server variant: its name, the environment it adds, and what it answered."""

    name: str
    env: dict[str, str]
    port: int = 0
    rows: list[dict[str, Any]] = field(default_factory=list)

    @property
    def tenant(self) -> str:
        return f"ab-{self.name}"


def parse_arm(text: str) -> Arm:
    """`name` or `name:VAR=value,VAR=value`."""
    name, _, rest = text.partition(":")
    if not name.isidentifier():
        raise ValueError(f"an arm's name is a word: {text!r}")
    env = {}
    for pair in filter(None, rest.split(",")):
        var, sep, value = pair.partition("=")
        if not sep or not var:
            raise ValueError(f"not VAR=value: {pair!r}")
        env[var] = value
    return Arm(name, env)


@contextlib.contextmanager
def _servers(arms: list[Arm], endpoint: str, data: Path) -> Iterator[list[subprocess.Popen[bytes]]]:
    """Each arm's server, started one after another (each seeds its own tenant)."""
    processes: list[subprocess.Popen[bytes]] = []
    try:
        for arm in arms:
            arm.port = free_port()
            env = {
                **os.environ,
                "KEYGRAPH_JWT_SECRET": SECRET,
                "KEYGRAPH_TENANT_BUDGET": str(10**12),
                "KEYGRAPH_TENANT_REFILL": str(10**12),
                "KEYGRAPH_DYNAMODB_ENDPOINT": endpoint,
                "KEYGRAPH_TABLE": TABLE.name,
                "KEYGRAPH_REGION": LOCAL_REGION,
                "KEYGRAPH_DEV_TENANT": arm.tenant,
                "AWS_ACCESS_KEY_ID": LOCAL_KEY_ID,
                "AWS_SECRET_ACCESS_KEY": LOCAL_SECRET,
                **arm.env,
            }
            command = [sys.executable, "-m", "server", "serve", "--demo", "--store", "dynamodb"]
            command += ["--port", str(arm.port), "--data", str(data / arm.name)]
            process = subprocess.Popen(command, cwd=ROOT, env=env, stderr=subprocess.DEVNULL)
            processes.append(process)
            wait_ready(f"http://{HOST}:{arm.port}", process)
        yield processes
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            process.wait(timeout=60)


async def _load(
    arms: list[Arm],
    processes: list[subprocess.Popen[bytes]],
    data: Path,
    minutes: float,
    concurrency: int,
    write_share: float,
) -> None:
    async def one(arm: Arm, pid: int) -> None:
        settings = Settings(data_dir=data, jwt_secret=SECRET)
        token = issue_token(settings, arm.tenant, "soak", roles=["admin"])
        soak = Soak(arm.port, token, concurrency, seed=20261124, write_share=write_share)

        def sample(minute: Minute) -> None:
            before = arm.rows[-1]["answers"] if arm.rows else 0
            row = {"answers": before + minute.answers, "errors": minute.errors}
            arm.rows.append({**row, "memory_kib": memory_kib(pid)})
            print(f"[soak-ab] {arm.name} {json.dumps(arm.rows[-1])}", file=sys.stderr)

        await soak.run(minutes, sample)

    await asyncio.gather(*(one(a, p.pid) for a, p in zip(arms, processes, strict=True)))


def summary(arm: Arm) -> dict[str, Any]:
    """The arm's growth from its first minute's sample to its last, and per request."""
    first, last = arm.rows[0], arm.rows[-1]
    answered = last["answers"] - first["answers"]
    out: dict[str, Any] = {"answers_after_first_minute": answered}
    for part in ("RssAnon", "HeapAnon"):
        start, end = first["memory_kib"][part], last["memory_kib"][part]
        out[part] = {
            "first_kib": start,
            "last_kib": end,
            "growth": round(end / start - 1, 4) if start else None,
            "bytes_a_request": round((end - start) * 1024 / answered) if answered else None,
        }
    return out


def run(
    arms: list[Arm], minutes: float, concurrency: int, write_share: float, data: Path
) -> dict[str, Any]:
    with DynamoDBLocal(data_dir=data / "dynamodb-local") as local:
        client = make_client(
            local.endpoint_url, LOCAL_REGION, 4, LOCAL_KEY_ID, LOCAL_SECRET, read_timeout=60
        )
        try:
            admin.create_table(client, TABLE)
        finally:
            client.close()
        with _servers(arms, local.endpoint_url, data) as processes:
            asyncio.run(_load(arms, processes, data, minutes, concurrency, write_share))
    return {
        "minutes": minutes,
        "concurrency": concurrency,
        "write_share": write_share,
        "arms": {
            arm.name: {"env": arm.env, "per_minute": arm.rows, "summary": summary(arm)}
            for arm in arms
        },
    }


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.soak_ab", description=__doc__)
    parser.add_argument("arms", nargs="+", type=parse_arm, help="name[:VAR=value,...]")
    parser.add_argument("--minutes", type=float, default=6.0, help="default 6")
    parser.add_argument("--concurrency", type=int, default=4, help="connections an arm")
    parser.add_argument("--write-share", type=float, default=WRITE_SHARE)
    parser.add_argument("--out", type=Path, help="default bench/results/soak-ab.json")
    args = parser.parse_args(argv)
    if len({arm.name for arm in args.arms}) != len(args.arms):
        parser.error("arm names must differ")
    with tempfile.TemporaryDirectory(prefix="keygraph-soak-ab-") as tmp:
        result = run(args.arms, args.minutes, args.concurrency, args.write_share, Path(tmp))
    result["machine"] = machine_info()
    out = args.out or RESULTS / "soak-ab.json"
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({name: arm["summary"] for name, arm in result["arms"].items()}, indent=2))


if __name__ == "__main__":
    main()

"""What the request limits cost and save: the time to estimate an operation's cost (the
compiled API's, keygraph.api.cost, in this process), and the memory of `python -m server serve` (the
compiled API) after it is sent a 200 MB body (declared, and streamed with no length).

`python -m bench limits` prints one JSON object and writes bench/results/limits.json.
"""

from __future__ import annotations

import json
import os
import socket
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from graphql import FragmentDefinitionNode, OperationDefinitionNode, parse

from bench import harness
from bench.machine import machine_info, memory_kib
from bench.processes import serving
from keygraph.api.cost import estimate
from keygraph.serve.package import extension_at, schema_of
from keygraph.stores.dynamodb.local import free_port
from server.auth.tokens import issue_token
from server.compiled import EXTENSION, PACKAGE
from server.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
RESULTS = Path(__file__).with_name("results")
ATTACK = (
    "{ users(first:100) { edges { node { groups(first:100) { edges { node {"
    " members(first:100) { edges { node { name email } } } } } } } } } }"
)
BODY_MB = 200
CHUNK = 1 << 20


def readme_query() -> str:
    text = (ROOT / "README.md").read_text()
    return text.split("```graphql\n", 1)[1].split("```", 1)[0]


def cost_timing(repeats: int) -> dict[str, Any]:
    """Median microseconds to estimate each query's cost (parsing and validation are cached
    per query text, so they are not part of it)."""
    schema = schema_of(PACKAGE, [extension_at(EXTENSION, PACKAGE)])
    found = {}
    for name, query in (("attack", ATTACK), ("readme", readme_query())):
        document = parse(query)
        operation = next(d for d in document.definitions if isinstance(d, OperationDefinitionNode))
        fragments = {
            d.name.value: d for d in document.definitions if isinstance(d, FragmentDefinitionNode)
        }
        samples = []
        for _ in range(repeats):
            started = time.perf_counter()
            cost = estimate(schema, operation, fragments, None)
            samples.append(time.perf_counter() - started)
        assert cost is not None
        found[name] = {"cost": cost, "median_us": round(statistics.median(samples) * 1e6, 1)}
    return found


def _send(port: int, token: str, declared: bool) -> int:
    """Send a 200 MB body (with its length, or chunked) and return the answer's status."""
    with socket.create_connection(("127.0.0.1", port)) as connection:
        length = f"Content-Length: {BODY_MB * CHUNK}" if declared else "Transfer-Encoding: chunked"
        connection.sendall(
            f"POST /graphql HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            f"Authorization: Bearer {token}\r\n{length}\r\n\r\n".encode()
        )
        chunk = b" " * CHUNK
        try:
            for _ in range(BODY_MB):
                connection.sendall(chunk if declared else b"%x\r\n" % CHUNK + chunk + b"\r\n")
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered and closed: the rest is never read
        answer = connection.recv(4096)
    return int(answer.split(b" ", 2)[1]) if answer else 0


def big_bodies() -> dict[str, Any]:
    """The server's memory idle, then after each 200 MB body."""
    port = free_port()
    secret = "limits-bench-" + "x" * 32
    env = {**os.environ, "KEYGRAPH_JWT_SECRET": secret}
    with tempfile.TemporaryDirectory() as data:
        command = [sys.executable, "-m", "server", "serve", "--port", str(port), "--data", data]
        with serving(command, f"http://127.0.0.1:{port}/healthz", env) as server:
            token = issue_token(
                Settings(data_dir=Path(data), jwt_secret=secret), "acme", roles=["admin"]
            )
            idle = memory_kib(server.pid)
            found: dict[str, Any] = {"idle_kib": idle}
            for declared in (True, False):
                started = time.perf_counter()
                status = _send(port, token, declared)
                name = "declared" if declared else "streamed"
                after = memory_kib(server.pid)
                found[name] = {
                    "status": status,
                    "seconds": round(time.perf_counter() - started, 3),
                    "after_kib": after,
                    "rss_growth_kib": after["VmRSS"] - idle["VmRSS"],
                }
    return found


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.parser("limits", __doc__)
    parser.add_argument("--repeats", type=int, default=2000, help="cost estimates per query")
    args = parser.parse_args(argv)
    result = {
        "machine": machine_info(),
        "cost": cost_timing(args.repeats),
        "body_mb": BODY_MB,
        "bodies": big_bodies(),
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "limits.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))

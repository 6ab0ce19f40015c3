"""`python -m bench <name> [options]`: each experiment by name, a module with
`main(argv)`, imported only when run; `python -m bench --help` lists them."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Callable, Sequence
from typing import cast

EXPERIMENTS: dict[str, tuple[str, str]] = {
    "queries": (
        "bench.run",
        "Q1-Q6, M1: keygraph, on graphql-core, the floor (make bench)",
    ),
    "peer": ("bench.peer.run", "keygraph against Strawberry + PynamoDB on DynamoDB Local"),
    "soak": ("bench.soak", "mixed reads and writes for minutes; --faults behind the fault proxy"),
    "store": ("bench.store_bench", "each store call's latency and client CPU against boto3"),
    "realtime": ("bench.realtime_bench", "subscriptions: write to client, events a second"),
    "lambda-cold": ("bench.lambda_cold", "a Lambda cold start: import a handler, answer one"),
    "mutations": ("bench.mutations_bench", "createOrder and updateUser against another checkout"),
    "big-response": ("bench.big_response", "peak memory to send a 5.64 MB response"),
    "limits": ("bench.limits", "the cost estimate's time and oversized bodies' memory"),
    "hostile-docs": ("bench.hostile_docs", "hostile documents: time and event-loop lag"),
    "literals": ("bench.literals_bench", "inlined literals against variables and APQ hits"),
    "persisted": ("bench.persisted_bench", "APQ hits against texts, by document size"),
    "observability": ("bench.observability_bench", "what metrics and traces cost a request"),
    "authz": ("bench.authz_bench", "what the generated guards cost on Q1 and Q3"),
    "migrate": ("bench.migrate_bench", "a migration's backfill against a PutItem loop"),
    "changes": ("bench.changes_bench", "deletes, moves and Idempotency-Key"),
    "change-log": ("bench.stream_bench", "what the embedded change log costs a write"),
    "dynamodb-stream": ("bench.dynamodb_stream_bench", "the DynamoDB Streams reader"),
    "codegen": ("bench.codegen_bench", "a full `generate` of access_patterns.toml"),
    "budget": ("bench.budget_bench", "a budget check: the bucket in Redis against the local one"),
    "hosts": ("bench.hosts_bench", "four hosts on one Redis: latency, failover, CPU per event"),
}
"""name -> (module, one line)."""

Main = Callable[[Sequence[str]], object]


def parser(name: str, doc: str | None) -> argparse.ArgumentParser:
    """The argument parser of experiment `name`, described by its docstring's first paragraph."""
    first = (doc or "").split("\n\n", maxsplit=1)[0]
    return argparse.ArgumentParser(prog=f"python -m bench {name}", description=first)


def usage() -> str:
    width = max(map(len, EXPERIMENTS))
    lines = [f"  {name:<{width}}  {line}" for name, (_, line) in EXPERIMENTS.items()]
    return "\n".join(
        ["usage: python -m bench <name> [options]   (<name> --help for its options)", "", *lines]
    )


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print(usage(), file=sys.stderr)
        return 2
    if args[0] in ("-h", "--help"):
        print(usage())
        return 0
    name, rest = args[0], args[1:]
    if name not in EXPERIMENTS:
        print(f"python -m bench: no experiment {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    module = importlib.import_module(EXPERIMENTS[name][0])
    cast(Main, module.main)(rest)
    return 0

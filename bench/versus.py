"""`python -m bench.versus --against PATH`: one operation over HTTP, served by this checkout
and by another one (an earlier commit, e.g. `git worktree add /tmp/then <commit>`), in
alternating runs of one session, so that a change is measured against the code before it on
the same machine minutes apart.

Each run starts the checkout's own benchmark server (`bench.serve`, keygraph variant) on its
own copy of its own seeded dataset (cached under its `.keygraph/bench/`), then loads it from
a separate load-generator process at the given concurrency. The other checkout uses this
one's DynamoDB Local install. Prints each run's p50 and req/s, then the medians and ratios.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.overhttp import ROOT

_ONE_RUN = Path(__file__).with_name("versus_run.py")


def _runs(tree: Path, op: str, store: str, concurrency: int, seconds: float) -> list[Any]:
    """Two timed runs in `tree`, by bench/versus_run.py with the tree's own modules."""
    local = tree / ".keygraph" / "dynamodb-local"
    if tree != ROOT and not local.exists():
        local.parent.mkdir(parents=True, exist_ok=True)
        local.symlink_to(ROOT / ".keygraph" / "dynamodb-local")
    command = [sys.executable, str(_ONE_RUN), op, store, str(concurrency), str(seconds)]
    done = subprocess.run(
        command,
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the run in {tree} failed: {done.stderr.decode()[-2000:]}")
    found: list[Any] = json.loads(done.stdout.decode().splitlines()[-1])
    return found


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.versus", description=__doc__)
    parser.add_argument("--against", type=Path, required=True, help="the other checkout")
    parser.add_argument("--op", default="Q3", help="the operation (Q3)")
    parser.add_argument("--store", choices=("embedded", "dynamodb-local"), default="dynamodb-local")
    parser.add_argument("--concurrency", type=int, default=8, help="(8)")
    parser.add_argument("--seconds", type=float, default=30.0, help="per timed run (30)")
    parser.add_argument("--rounds", type=int, default=2, help="rounds of both checkouts (2)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    trees = {"then": args.against.resolve(), "now": ROOT}
    found: dict[str, list[Any]] = {"then": [], "now": []}
    for _ in range(args.rounds):
        for name, tree in trees.items():
            runs = _runs(tree, args.op, args.store, args.concurrency, args.seconds)
            found[name] += runs
            for run in runs:
                print(f"{name}: p50 {run['p50']:.1f} ms, {run['rps']:.1f} req/s", flush=True)
    medians = {
        name: {key: statistics.median(run[key] for run in runs) for key in ("p50", "rps")}
        for name, runs in found.items()
    }
    then, now = medians["then"], medians["now"]
    print(
        f"{args.op} on {args.store} at concurrency {args.concurrency}, medians: p50"
        f" {then['p50']:.1f} -> {now['p50']:.1f} ms ({now['p50'] / then['p50']:.2f} of then),"
        f" {then['rps']:.1f} -> {now['rps']:.1f} req/s ({now['rps'] / then['rps']:.2f}x)"
    )
    return medians


if __name__ == "__main__":
    main()

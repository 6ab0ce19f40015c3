"""`python -m bench.floor_versus --against PATH`: keygraph ÷ floor in process on the embedded
store, for this checkout and another one (an earlier commit, e.g. extracted with `git archive`
into /tmp/then), in alternating rounds of one session: a change's effect on each ratio,
measured side by side on the same machine minutes apart.

Each round runs bench/floor_versus_run.py in each checkout, on that checkout's own copy of its
own seeded full dataset (the other checkout may share this one's `.keygraph` by a symlink).
Prints per operation, for both checkouts, the medians of a request's CPU time (this thread's)
and wall time and of keygraph ÷ floor by each (the floor's time over keygraph's).
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

_ONE_RUN = Path(__file__).with_name("floor_versus_run.py")


def _run(tree: Path, ops: str, repeats: int, seconds: float) -> dict[str, Any]:
    command = [sys.executable, str(_ONE_RUN), ops, str(repeats), str(seconds)]
    done = subprocess.run(
        command,
        cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)},
        capture_output=True,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"the run in {tree} failed: {done.stderr.decode()[-2000:]}")
    found: dict[str, Any] = json.loads(done.stdout.decode().splitlines()[-1])
    return found


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(prog="python -m bench.floor_versus", description=__doc__)
    parser.add_argument("--against", type=Path, required=True, help="the other checkout")
    parser.add_argument("--ops", default="Q1,Q3,Q4,Q6,M1", help="(Q1,Q3,Q4,Q6,M1)")
    parser.add_argument("--rounds", type=int, default=3, help="rounds of both checkouts (3)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs a round (3)")
    parser.add_argument("--seconds", type=float, default=1.0, help="per server a run (1)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    trees = {"then": args.against.resolve(), "now": ROOT}
    names = args.ops.split(",")
    found: dict[str, dict[str, dict[str, list[float]]]] = {
        tree: {name: {} for name in names} for tree in trees
    }
    for number in range(args.rounds):
        for tree, path in trees.items():
            for name, series in _run(path, args.ops, args.repeats, args.seconds).items():
                for key, values in series.items():
                    found[tree][name].setdefault(key, []).extend(values)
            print(f"round {number + 1}: {tree} done", file=sys.stderr, flush=True)
    medians = {
        tree: {
            name: {key: statistics.median(values) for key, values in series.items()}
            for name, series in by_op.items()
        }
        for tree, by_op in found.items()
    }
    print(
        "| op | floor CPU ms | then CPU ms | now CPU ms | then ÷ floor, CPU | now ÷ floor, CPU"
        " | floor p50 ms | then p50 ms | now p50 ms | then ÷ floor | now ÷ floor |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for name in names:
        then, now = medians["then"][name], medians["now"][name]
        print(
            f"| {name} | {now['floor_cpu']:.3f} | {then['keygraph_cpu']:.3f} |"
            f" {now['keygraph_cpu']:.3f} | {then['cpu_ratio']:.2f}x | {now['cpu_ratio']:.2f}x |"
            f" {now['floor_p50']:.2f} | {then['keygraph_p50']:.2f} |"
            f" {now['keygraph_p50']:.2f} | {then['ratio']:.2f}x | {now['ratio']:.2f}x |"
        )
    return medians


if __name__ == "__main__":
    main()

"""Times a full codegen run for access_patterns.toml: load, check, lint, lower, render and
ruff-format, in memory (nothing written). Prints the median of N runs.

    python -m bench codegen [--runs N] [--spec PATH]
"""

from __future__ import annotations

import os
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from bench import harness
from codegen import pipeline

ROOT = Path(__file__).resolve().parents[1]


def _cpu() -> float:
    """CPU seconds of this process and its finished children (ruff)."""
    times = os.times()
    return times.user + times.system + times.children_user + times.children_system


def main(argv: Sequence[str]) -> None:
    parser = harness.parser("codegen", __doc__)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--spec", type=Path, default=ROOT / "access_patterns.toml")
    args = parser.parse_args(argv)
    text = args.spec.read_text(encoding="utf-8")
    timings: list[float] = []
    cpu: list[float] = []
    files: dict[str, str] = {}
    for _ in range(args.runs):
        start, start_cpu = time.perf_counter(), _cpu()
        files = pipeline.generate(text, args.spec.name)
        timings.append(time.perf_counter() - start)
        cpu.append(_cpu() - start_cpu)
    print(
        f"codegen generate ({args.spec.name}, {len(files)} files), {args.runs} runs: "
        f"median {statistics.median(timings) * 1000:.0f} ms wall "
        f"(min {min(timings) * 1000:.0f}, max {max(timings) * 1000:.0f}), "
        f"median {statistics.median(cpu) * 1000:.0f} ms CPU incl. ruff; "
        f"load average {os.getloadavg()[0]:.1f}"
    )

"""Latency statistics: percentiles, medians and the summary of one timed run."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any


def percentile(values: Sequence[float], fraction: float) -> float:
    """The nearest-rank percentile: the smallest value with at least `fraction` of the values
    at or below it (so p99 of 50 samples is the largest)."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0.0 < fraction <= 1.0:
        raise ValueError(f"fraction must be in (0, 1], got {fraction}")
    ordered = sorted(values)
    rank = math.ceil(fraction * len(ordered))
    return ordered[rank - 1]


def median(values: Sequence[float]) -> float:
    if not values:
        raise ValueError("median of no values")
    return float(statistics.median(values))


@dataclass(frozen=True, slots=True)
class RunSummary:
    """One timed run: how many requests completed in how long, and their latency."""

    requests: int
    errors: int
    seconds: float
    rps: float
    p50_ms: float
    p99_ms: float
    cpu_ms: float | None = None
    """The server process's CPU time per request, when it was read (over HTTP)."""

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def summarize(
    latencies_s: Sequence[float],
    seconds: float,
    errors: int = 0,
    server_cpu_s: float | None = None,
) -> RunSummary:
    """Summarize request latencies (in seconds) taken over a wall-clock span of `seconds`,
    and the CPU time the server spent on them."""
    if seconds <= 0:
        raise ValueError("a run must last a positive time")
    return RunSummary(
        requests=len(latencies_s),
        errors=errors,
        seconds=seconds,
        rps=len(latencies_s) / seconds,
        p50_ms=percentile(latencies_s, 0.5) * 1000,
        p99_ms=percentile(latencies_s, 0.99) * 1000,
        cpu_ms=None if server_cpu_s is None else server_cpu_s * 1000 / len(latencies_s),
    )


@dataclass(frozen=True, slots=True)
class MedianSummary:
    """The medians over repeated runs of one measurement."""

    runs: int
    rps: float
    p50_ms: float
    p99_ms: float
    errors: int
    cpu_ms: float | None = None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def median_of(runs: Sequence[RunSummary]) -> MedianSummary:
    return MedianSummary(
        runs=len(runs),
        rps=median([run.rps for run in runs]),
        p50_ms=median([run.p50_ms for run in runs]),
        p99_ms=median([run.p99_ms for run in runs]),
        errors=sum(run.errors for run in runs),
        cpu_ms=median(cpus) if (cpus := cpu_per_request(runs)) is not None else None,
    )


def cpu_per_request(runs: Sequence[RunSummary]) -> list[float] | None:
    """Each run's server CPU per request, or None when a run was not read for it."""
    found = [run.cpu_ms for run in runs]
    if not found or any(cpu is None for cpu in found):
        return None
    return [cpu for cpu in found if cpu is not None]


def median_ratio(numerators: Sequence[float], denominators: Sequence[float]) -> float:
    """The median of per-repeat ratios, each taken side by side in the same repeat; this
    cancels slow drifts of a shared, noisy machine better than a ratio of medians."""
    if len(numerators) != len(denominators) or not numerators:
        raise ValueError("ratios need paired, non-empty samples")
    return median([n / d for n, d in zip(numerators, denominators, strict=True)])

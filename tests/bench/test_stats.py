import pytest

from bench.stats import RunSummary, median_of, median_ratio, percentile, summarize


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 101)]
    assert percentile(values, 0.5) == 50.0
    assert percentile(values, 0.99) == 99.0
    assert percentile(values, 1.0) == 100.0
    assert percentile([3.0, 1.0, 2.0], 0.5) == 2.0


def test_percentile_of_few_values_is_the_largest_for_p99() -> None:
    assert percentile([0.1, 0.5, 0.2], 0.99) == 0.5


@pytest.mark.parametrize("fraction", [0.0, -0.1, 1.5])
def test_percentile_refuses_bad_fractions(fraction: float) -> None:
    with pytest.raises(ValueError, match="fraction"):
        percentile([1.0], fraction)


def test_summarize_converts_to_milliseconds_and_rate() -> None:
    summary = summarize([0.001, 0.002, 0.003, 0.004], seconds=2.0, errors=1)
    assert summary.requests == 4
    assert summary.rps == 2.0
    assert summary.p50_ms == pytest.approx(2.0)
    assert summary.p99_ms == pytest.approx(4.0)
    assert summary.errors == 1


def test_summarize_divides_the_servers_cpu_by_the_requests() -> None:
    summary = summarize([0.001] * 4, seconds=1.0, server_cpu_s=0.002)
    assert summary.cpu_ms == pytest.approx(0.5)
    assert summarize([0.001], seconds=1.0).cpu_ms is None


def test_median_of_runs_takes_each_measure_separately() -> None:
    runs = [
        RunSummary(10, 0, 1.0, rps, p50, p99)
        for rps, p50, p99 in [(100.0, 5.0, 9.0), (300.0, 1.0, 20.0), (200.0, 3.0, 10.0)]
    ]
    summary = median_of(runs)
    assert (summary.rps, summary.p50_ms, summary.p99_ms, summary.runs) == (200.0, 3.0, 10.0, 3)


def test_median_ratio_pairs_samples_of_the_same_repeat() -> None:
    # Each repeat's pair has ratio 0.5 although the medians of each side differ in ratio.
    assert median_ratio([1.0, 10.0, 100.0], [2.0, 20.0, 200.0]) == 0.5
    with pytest.raises(ValueError, match="paired"):
        median_ratio([1.0], [1.0, 2.0])

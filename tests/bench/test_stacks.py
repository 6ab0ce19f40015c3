import pytest

from bench.serve import STACKS
from bench.stacks import BASELINE, summarize_stacks
from bench.stats import RunSummary


def _run(cpu_ms: float | None) -> RunSummary:
    return RunSummary(100, 0, 1.0, 100.0, 1.0, 2.0, cpu_ms=cpu_ms)


def test_each_stack_is_compared_with_the_baseline_in_the_same_round() -> None:
    assert BASELINE in STACKS
    runs: dict[str, list[RunSummary]] = {
        # The second round ran on a machine twice as busy: each round's ratio is 0.5.
        BASELINE: [_run(1.0), _run(2.0), _run(1.2)],
        "keygraph": [_run(0.5), _run(1.0), _run(0.6)],
    }
    found = summarize_stacks(runs)
    assert found["keygraph"]["cpu_of_baseline"] == pytest.approx(0.5)
    assert found[BASELINE]["cpu_of_baseline"] == pytest.approx(1.0)
    assert found["keygraph"]["cpu_ms"] == pytest.approx(0.6)


def test_a_stack_whose_cpu_was_not_read_has_no_ratio() -> None:
    found = summarize_stacks({BASELINE: [_run(1.0)], "granian": [_run(None)]})
    assert found["granian"]["cpu_of_baseline"] is None

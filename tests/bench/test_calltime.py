"""Where a request's time goes by store call: the interval arithmetic, and a quick run on the
embedded store checked against the server's own call counts."""

import json
from pathlib import Path

import pytest

from bench.calltime import busy, main


def test_busy_counts_overlapping_calls_once() -> None:
    assert busy([]) == 0.0
    assert busy([(0.0, 1.0)]) == 1.0
    assert busy([(0.0, 1.0), (2.0, 3.5)]) == 2.5  # apart
    assert busy([(0.0, 2.0), (1.0, 3.0)]) == 3.0  # overlapping
    assert busy([(0.0, 4.0), (1.0, 2.0), (3.0, 3.5)]) == 4.0  # inside another
    assert busy([(5.0, 6.0), (0.0, 1.0), (0.5, 2.0)]) == 3.0  # any order


def test_quick_run_accounts_for_every_call(tmp_path: Path) -> None:
    out = tmp_path / "calltime.json"
    result = main(["--store", "embedded", "--quick", "--repeats", "2", "--out", str(out)])
    assert json.loads(out.read_text())["op"] == "Q3"
    batched, naive = result["keygraph"], result["naive"]
    # Q3 on the quick data (20 users): the users, then a Query per user for its orders, and
    # the groups (their ids are on the users) in one BatchGetItem when batched.
    assert batched["calls"]["Query"]["count"] == 21
    assert batched["calls"]["BatchGetItem"]["count"] == 1
    assert naive["calls"]["Query"]["count"] == 21
    assert naive["calls"]["BatchGetItem"]["count"] > 1
    for variant in (batched, naive):
        in_flight = sum(call["ms"] for call in variant["calls"].values())
        assert 0 < in_flight <= variant["request_ms"]
    assert result["ceiling"] >= result["speedup"] > 0


def test_an_operation_without_a_naive_baseline_is_refused() -> None:
    with pytest.raises(SystemExit, match="Q2, Q3, Q4, Q5"):
        main(["--store", "embedded", "--quick", "--op", "Q1"])

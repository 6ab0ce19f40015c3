"""Each tenant's budget of cost points (keygraph/serve/budget.py): the token bucket that
refuses, refills, gives back what an answer did not use and forgets full buckets, and a
budget shared out among workers."""

from __future__ import annotations

from keygraph.serve.budget import FORGET_AFTER, TenantBudget, share


class Clock:
    """A clock the test moves by hand."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_a_bucket_refuses_what_it_does_not_hold_and_refills() -> None:
    clock = Clock()
    budget = TenantBudget(100, 10, clock)
    assert budget.take("a", 60).admitted
    refused = budget.take("a", 60)
    assert not refused.admitted
    assert refused.remaining == 40
    assert refused.retry_after == 2  # 20 points at 10 a second
    assert budget.take("b", 100).admitted  # another tenant has its own bucket
    clock.now = 2.0
    assert budget.take("a", 60).admitted
    clock.now = 1000.0
    assert budget.remaining("a") == 100  # never above capacity


def test_unused_points_come_back() -> None:
    budget = TenantBudget(100, 1, Clock())
    budget.take("a", 80)
    assert budget.refund("a", 70) == 90
    assert budget.refund("a", 500) == 100
    assert budget.refund("a", -5) == 100


def test_full_buckets_are_forgotten() -> None:
    clock = Clock()
    budget = TenantBudget(10, 1, clock)
    for index in range(FORGET_AFTER):
        budget.take(f"t{index}", 1)
    clock.now = 100.0  # every bucket has refilled
    budget.take("newcomer", 1)
    assert budget.remaining("t0") == 10
    assert len(budget._buckets) <= 3


def test_workers_share_the_budget() -> None:
    assert share(100_000, 20_000, 4) == (25_000, 5_000)

"""The changes benchmark, run small: its deletes and moves finish, its replays replay."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import changes_bench
from server.domain import cleanup


async def test_a_small_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    small = {"users": 2, "big_orders": 60, "big_tree": 120, "requests": 3}
    monkeypatch.setitem(changes_bench.SIZES, "embedded", small)
    monkeypatch.setattr(cleanup, "INLINE_SECONDS", cleanup.INLINE_SECONDS)
    result = await changes_bench.measure("embedded", tmp_path)
    assert result["delete_user"]["big_items"] == 120
    assert result["delete_user"]["big_complete_inline"] is True
    assert result["move_org_node"]["big_complete"] is True
    assert result["idempotency"]["requests"] == 3

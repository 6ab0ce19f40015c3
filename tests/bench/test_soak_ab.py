"""The side-by-side soak: arms parsed from the command line, and a few seconds of two arms."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench import soak_ab


def test_an_arm_is_a_name_and_its_environment() -> None:
    arm = soak_ab.parse_arm("mmap:MALLOC_MMAP_THRESHOLD_=131072,PYTHONMALLOC=malloc")
    assert (arm.name, arm.tenant) == ("mmap", "ab-mmap")
    assert arm.env == {"MALLOC_MMAP_THRESHOLD_": "131072", "PYTHONMALLOC": "malloc"}
    assert soak_ab.parse_arm("base").env == {}


@pytest.mark.parametrize(
    ("text", "why"),
    [("", "a word"), ("a b", "a word"), ("x:NOEQUALS", "VAR=value"), ("x:=1", "VAR=value")],
)
def test_a_malformed_arm_is_refused(text: str, why: str) -> None:
    with pytest.raises(ValueError, match=why):
        soak_ab.parse_arm(text)


@pytest.mark.dynamodb_local
def test_two_arms_each_load_their_own_server(tmp_path: Path) -> None:
    arms = [soak_ab.parse_arm("a"), soak_ab.parse_arm("b:MALLOC_MMAP_THRESHOLD_=131072")]
    result = soak_ab.run(arms, minutes=0.05, concurrency=2, write_share=0.5, data=tmp_path)
    for name in ("a", "b"):
        arm = result["arms"][name]
        (row,) = arm["per_minute"]
        assert row["answers"] > 0
        assert row["errors"] == 0
        assert 0 < row["memory_kib"]["HeapAnon"] < row["memory_kib"]["RssAnon"]
        assert arm["summary"]["answers_after_first_minute"] == 0
    assert result["arms"]["b"]["env"] == {"MALLOC_MMAP_THRESHOLD_": "131072"}

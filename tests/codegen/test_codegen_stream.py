"""The table's change stream in the spec: every table definition codegen writes carries it,
and a value DynamoDB does not know is refused with its path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from codegen import pipeline
from codegen.diagnostics import SpecErrors

CASES = Path(__file__).with_name("cases")
TIMESERIES = (CASES / "timeseries" / "spec.toml").read_text(encoding="utf-8")
TTL = 'ttl_attribute = "expires_at"\n'


def _generate(stream: str | None) -> dict[str, str]:
    line = "" if stream is None else f'stream = "{stream}"\n'
    return pipeline.generate(TIMESERIES.replace(TTL, TTL + line, 1), "spec.toml")


def test_every_table_definition_carries_the_stream() -> None:
    out = _generate("NEW_AND_OLD_IMAGES")
    wanted = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert json.loads(out["table.json"])["StreamSpecification"] == wanted
    cloudformation = json.loads(out["cloudformation.json"])
    properties = cloudformation["Resources"]["Table"]["Properties"]
    assert properties["StreamSpecification"] == {"StreamViewType": "NEW_AND_OLD_IMAGES"}
    terraform = json.loads(out["table.tf.json"])["resource"]["aws_dynamodb_table"]["telemetry"]
    assert terraform["stream_enabled"] is True
    assert terraform["stream_view_type"] == "NEW_AND_OLD_IMAGES"
    workbench = json.loads(out["nosql-workbench.json"])
    assert workbench["DataModel"][0]["StreamSpecification"] == wanted
    assert 'stream="NEW_AND_OLD_IMAGES",' in out["table.py"]


def test_a_table_without_a_stream_declares_none() -> None:
    out = _generate(None)
    assert "Stream" not in out["table.json"] + out["cloudformation.json"]
    assert "Stream" not in out["nosql-workbench.json"]
    assert "stream" not in out["table.tf.json"] + out["table.py"].split('"""')[-1]


def test_a_view_dynamodb_does_not_know_is_refused() -> None:
    with pytest.raises(SpecErrors) as caught:
        _generate("NEW_IMAGES")
    (problem,) = caught.value.problems
    assert "table.stream" in problem.render("spec.toml")
    assert "NEW_AND_OLD_IMAGES" in problem.render("spec.toml")

"""The generated stack (stack.json, an AWS SAM template) for this repository's spec and the
social case's: cfn-lint and checkov report nothing on it (each check it skips says why), and
its policy names exactly the actions and indexes the spec's patterns and writes use."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from codegen import pipeline

ROOT = Path(__file__).parents[2]
TOOLS = ROOT / ".keygraph" / "iac" / "bin"
SPECS = {
    "repository": ROOT / "access_patterns.toml",
    "social": ROOT / "tests" / "codegen" / "cases" / "social" / "spec.toml",
}


def stack_of(spec: Path) -> dict[str, Any]:
    files = pipeline.generate(spec.read_text(encoding="utf-8"), spec.name, "served")
    document: dict[str, Any] = json.loads(files["stack.json"])
    return document


def tool(name: str) -> Path:
    path = TOOLS / name
    if not path.exists():
        message = f"{name} is not installed: run `make iac-tools`"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    return path


@pytest.mark.parametrize("name", list(SPECS))
def test_the_stack_passes_cfn_lint_and_checkov(name: str, tmp_path: Path) -> None:
    template = tmp_path / "stack.json"
    template.write_text(json.dumps(stack_of(SPECS[name])))
    lint = subprocess.run([tool("cfn-lint"), template], capture_output=True, text=True, check=False)
    assert lint.returncode == 0, lint.stdout + lint.stderr
    command = [str(tool("checkov")), "-f", str(template), "--framework", "cloudformation"]
    command += ["--compact", "--quiet", "--skip-download", "--output", "json"]
    checked = subprocess.run(command, capture_output=True, text=True, cwd=tmp_path, check=False)
    assert checked.returncode == 0, checked.stdout[-4000:] + checked.stderr[-2000:]
    summary = json.loads(checked.stdout)["summary"]
    assert summary["failed"] == 0
    assert summary["passed"] > 0


def policy(stack: dict[str, Any]) -> dict[str, dict[str, Any]]:
    (document,) = stack["Resources"]["Function"]["Properties"]["Policies"]
    return {s["Sid"]: s for s in document["Statement"]}


def test_the_policy_is_what_the_spec_uses() -> None:
    repository = policy(stack_of(SPECS["repository"]))
    assert repository["TableItems"]["Action"] == [
        "dynamodb:BatchGetItem",
        "dynamodb:ConditionCheckItem",  # createOrder's check of its user
        "dynamodb:DeleteItem",  # deleteOrder's
        "dynamodb:GetItem",
        "dynamodb:PutItem",  # every create's and update's: none updates a count
        "dynamodb:Query",
    ]
    indexes = [r["Fn::Sub"] for r in repository["IndexQueries"]["Resource"]]
    assert indexes == ["${Table.Arn}/index/GSI1", "${Table.Arn}/index/GSI2"]
    social = policy(stack_of(SPECS["social"]))
    assert set(social) == {"TableItems", "IdempotencyRecords", "CleanupTasks", "ReadinessProbe"}
    ready = social["ReadinessProbe"]  # /readyz's read, in a partition of its own
    assert ready["Action"] == ["dynamodb:GetItem"]
    assert ready["Condition"] == {
        "ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["~KEYGRAPH#READY"]}
    }
    records = social["IdempotencyRecords"]
    assert records["Condition"] == {
        "ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["~KEYGRAPH#IDEMPOTENCY#*"]}
    }
    tasks = social["CleanupTasks"]  # a member's delete leaves a task removing what it owns
    assert tasks["Action"] == ["dynamodb:DeleteItem", "dynamodb:PutItem", "dynamodb:Query"]
    assert tasks["Condition"] == {
        "ForAllValues:StringLike": {"dynamodb:LeadingKeys": ["~KEYGRAPH#CLEANUP"]}
    }
    assert "CleanupTasks" not in repository  # nothing of its spec owns items
    assert social["TableItems"]["Action"] == [
        "dynamodb:ConditionCheckItem",
        "dynamodb:DeleteItem",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:Query",
        "dynamodb:UpdateItem",
    ]
    for statement in [*repository.values(), *social.values()]:
        assert all("*" not in action and "Scan" not in action for action in statement["Action"])


def test_a_spec_whose_deletes_leave_owned_items_gets_their_sweeper() -> None:
    social = stack_of(SPECS["social"])["Resources"]
    sweeper = social["Sweeper"]["Properties"]
    assert sweeper["Handler"] == "keygraph.serve.lambda_handler.sweep"
    schedule = sweeper["Events"]["Every"]
    assert schedule == {"Type": "Schedule", "Properties": {"Schedule": "rate(1 minute)"}}
    assert sweeper["Policies"] == social["Function"]["Properties"]["Policies"]
    assert {"SweeperLogs", "SweeperErrors", "SweeperThrottles"} <= set(social)
    assert "Sweeper" not in stack_of(SPECS["repository"])["Resources"]

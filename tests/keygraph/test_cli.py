"""The `keygraph` command in process: codegen's commands on a spec of its own, the table
command on a package given by directory (also the runtime's own, `python -m keygraph`),
and bad input said in a line, exit 2, without a traceback (no package there; DynamoDB
without a region or credentials); `keygraph token` signing with the development secret when
none is set."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from codegen.cli import main
from keygraph import cli as runtime_cli
from keygraph.serve.secret import SECRET_ENV
from keygraph.tokens import TokenKey, verify

SPEC = Path(__file__).parents[1] / "codegen" / "cases" / "webshop" / "spec.toml"


@pytest.fixture
def package(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """The webshop spec generated as package `cli_shop`; imports of it are forgotten after."""
    monkeypatch.setattr(sys, "path", list(sys.path))
    out = tmp_path / "cli_shop"
    assert main(["generate", "--spec", str(SPEC), "--out", str(out)]) == 0
    yield out
    for name in [m for m in sys.modules if m.split(".")[0] == "cli_shop"]:
        del sys.modules[name]


def test_codegen_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["lint", "--spec", str(SPEC)]) == 0
    out = tmp_path / "shop"
    assert main(["generate", "--spec", str(SPEC), "--out", str(out)]) == 0
    assert main(["check", "--spec", str(SPEC), "--out", str(out)]) == 0
    (out / "table.py").unlink()
    assert main(["check", "--spec", str(SPEC), "--out", str(out)]) == 1
    assert "table.py" in capsys.readouterr().out


def test_table_plan_and_describe_on_the_embedded_store(
    package: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = str(tmp_path / "data" / "shop.sqlite3")
    assert main(["table", "plan", "--package", str(package), "--path", path]) == 0
    assert "nothing to do" in capsys.readouterr().out
    assert main(["table", "describe", "--package", str(package), "--path", path]) == 0
    assert '"ByStatus"' in capsys.readouterr().out
    assert runtime_cli.main(["table", "plan", "--package", str(package), "--path", path]) == 0
    assert "nothing to do" in capsys.readouterr().out


def test_a_package_not_there(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["table", "plan", "--package", "no_such_package_here"]) == 2
    err = capsys.readouterr().err
    assert "cannot import the generated package 'no_such_package_here'" in err
    assert "Traceback" not in err


def test_dynamodb_without_configuration_says_what_to_set(
    package: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    for name in list(os.environ):
        if name.startswith("AWS_") and name != "AWS_CA_BUNDLE":
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(package / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(package / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")
    argv = ["table", "describe", "--package", str(package), "--store", "dynamodb"]
    assert main(argv) == 2
    assert "error: no AWS region for DynamoDB: pass region=" in capsys.readouterr().err
    assert main([*argv, "--region", "eu-west-1"]) == 2
    err = capsys.readouterr().err
    assert "error: no AWS credentials for DynamoDB" in err
    assert "(as options: --region, --endpoint-url)" in err


def test_token_signs_with_the_dev_secret_unless_one_is_set(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(SECRET_ENV, raising=False)
    db = tmp_path / "data" / "shop.sqlite3"
    assert main(["token", "--tenant", "acme", "--db", str(db)]) == 0
    dev = (db.parent / "dev-jwt-secret").read_text().strip()
    assert verify(capsys.readouterr().out.strip(), TokenKey(dev)).tenant == "acme"
    monkeypatch.setenv(SECRET_ENV, "short")
    assert main(["token", "--tenant", "acme", "--db", str(db)]) == 2
    assert f"set {SECRET_ENV}" in capsys.readouterr().err

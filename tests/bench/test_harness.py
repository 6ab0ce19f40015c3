"""`python -m bench <name>`: every name leads to a module with `main`, and the list is what
`--help` prints."""

import importlib
import subprocess
import sys

import pytest

from bench.harness import EXPERIMENTS, main, parser, usage


@pytest.mark.parametrize("name", EXPERIMENTS)
def test_each_experiment_has_a_main(name: str) -> None:
    module = importlib.import_module(EXPERIMENTS[name][0])
    assert callable(module.main), name


def test_help_lists_every_experiment(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    listed = capsys.readouterr().out
    assert listed == usage() + "\n"
    for name in EXPERIMENTS:
        assert f"  {name} " in listed


def test_an_unknown_name_or_none_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert main(["nothing"]) == 2
    assert "no experiment 'nothing'" in capsys.readouterr().err


def test_an_experiment_parses_its_own_options() -> None:
    assert parser("soak", "First paragraph.\n\nMore.").description == "First paragraph."
    done = subprocess.run(
        [sys.executable, "-m", "bench", "limits", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout.startswith("usage: python -m bench limits")

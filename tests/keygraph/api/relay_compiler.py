"""relay-compiler (from npm, `make relay-compiler`) for the tests of Relay clients: skipped
with how to get it when it is missing (a failure under CI)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.keygraph.api.conftest import ROOT

COMPILER = ROOT / ".keygraph/relay/node_modules/.bin/relay-compiler"


def relay_compiler() -> Path:
    """The relay-compiler executable, or the test skipped (failed under CI) without it."""
    if COMPILER.exists():
        return COMPILER
    reason = "relay-compiler is not installed: run `make relay-compiler` (needs npm)"
    if os.environ.get("CI"):
        pytest.fail(reason)
    pytest.skip(reason)

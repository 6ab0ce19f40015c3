"""The README's examples: the spec that is not this repo's, run as written (in a temporary
directory instead of /tmp/shop), and every GraphQL operation, valid against the schema."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

from graphql import parse, validate

from server.graphql.schema import build_schema
from server.settings import Limits

ROOT = Path(__file__).parents[1]


def _section() -> str:
    text = (ROOT / "README.md").read_text()
    return text.split("### One runtime, any spec", 1)[1].split("\n## ", 1)[0]


def test_the_any_spec_example_runs(tmp_path: Path) -> None:
    section = _section().replace("/tmp/shop", str(tmp_path))
    command = re.search(r"```sh\n(.*?)\n```", section, re.S)
    program = re.search(r"```python\n(.*?)```", section, re.S)
    assert command is not None
    assert program is not None
    argv = command.group(1).split()
    assert argv[0] == ".venv/bin/python"
    subprocess.run([sys.executable, *argv[1:]], cwd=ROOT, check=True, capture_output=True)
    done = subprocess.run(
        [sys.executable, "-c", program.group(1)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    lines = done.stdout.splitlines()
    assert lines[0].startswith("sku='TEA' title='Green tea'")
    assert lines[1].startswith("[Product(sku='TEA'")
    assert lines[2].count("OrderItem(") == 2
    assert lines[2].startswith("[Order(customer_id='c1', order_id='O1'")
    assert lines[3].startswith("[OrderByStatusSummary(customer_id='c1', order_id='O1'")


def test_the_example_imports_only_public_names() -> None:
    program = re.search(r"```python\n(.*?)```", _section(), re.S)
    assert program is not None
    imports = re.findall(r"^from (keygraph[\w.]*) import ([^#\n]+)", program.group(1), re.M)
    assert len(imports) >= 3
    for module, names in imports:
        public = importlib.import_module(module).__all__
        for name in names.split(","):
            assert name.strip() in public, f"{module}.{name.strip()}"


def test_the_graphql_operations_are_valid() -> None:
    text = (ROOT / "README.md").read_text()
    blocks = re.findall(r"```graphql\n(.*?)```", text, flags=re.DOTALL)
    assert len(blocks) >= 2
    schema = build_schema(Limits())._schema
    for block in blocks:
        assert validate(schema, parse(block)) == [], block

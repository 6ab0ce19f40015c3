"""Pipeline pieces: template parsing, located errors, import order, text that must not break
the generated Python."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from codegen import keymatch, keytemplate, output, pipeline
from codegen.diagnostics import SpecErrors
from codegen.formatter import ruff_binary
from codegen.imports import sort_imports
from codegen.pytypes import KeyVar

CASES = Path(__file__).with_name("cases")
RUFF_ARGS = ("--line-length", "100", "--select", "I,F")
TIMESERIES = (CASES / "timeseries" / "spec.toml").read_text(encoding="utf-8")


def test_templates_split_into_literal_and_placeholder_segments() -> None:
    template = keytemplate.parse("T#{tenant}#USER#{user_id}")
    assert [s.text for s in template.segments] == ["T", "{tenant}", "USER", "{user_id}"]
    assert template.placeholders == ("tenant", "user_id")
    assert keytemplate.parse("NODE#{path}#", condition=True).trailing_delimiter
    for bad in ("", "A##B", "USER{id}", "A#{Bad}", "A#b c"):
        with pytest.raises(keytemplate.TemplateError):
            keytemplate.parse(bad)


def test_errors_name_path_and_line() -> None:
    text = TIMESERIES.replace(
        'attributes.site = { type = "string"', 'attributes.site = { typ = "string"'
    )
    with pytest.raises(SpecErrors) as caught:
        pipeline.generate(text, "spec.toml")
    lines = [p.render("spec.toml") for p in caught.value.problems]
    site_line = 1 + text.splitlines().index(
        next(line for line in text.splitlines() if line.startswith("attributes.site"))
    )
    where = f"spec.toml:{site_line}: entities.Device.attributes.site"
    assert sorted(lines) == [
        f"{where}.typ: unknown key; did you mean `type`? remove it or fix its spelling "
        "(allowed here: default, description, field, ge, generated, id_separator, le, "
        "max_items, max_length, min_items, min_length, of, optional, pattern, type, values, "
        "width)",
        f"{where}.type: required key is missing; add it",
    ]


def test_imports_are_ordered_as_ruff_wants(tmp_path: Path) -> None:
    lines = ["from ..b import X", "import os", "from pydantic import Field", "from .a import y"]
    assert sort_imports(
        [*lines, "from typing import Any, ClassVar", "from typing import Annotated"]
    ) == [
        "import os",
        "from typing import Annotated, Any, ClassVar",
        "",
        "from pydantic import Field",
        "",
        "from ..b import X",
        "from .a import y",
    ]
    output.write(pipeline.generate(TIMESERIES, "spec.toml"), tmp_path / "pkg")
    done = subprocess.run(
        [ruff_binary(), "check", "--isolated", "--no-cache", *RUFF_ARGS, str(tmp_path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stdout


def test_descriptions_cannot_break_the_generated_code() -> None:
    tricky = r'a """quoted""" \ back\slash | pipe'
    text = TIMESERIES.replace('"A device; its events share its partition."', f"'{tricky}'").replace(
        '"Events by (device, time, id)"', f"'{tricky}'"
    )
    assert text.count(tricky) == 2
    files = pipeline.generate(text, "spec.toml")
    for path, source in files.items():
        if path.endswith(".py"):
            compile(source, path, "exec")
    assert r"a \"\"\"quoted\"\"\" \\ back\\slash" in files["models/device.py"]
    assert r"back\slash \| pipe" in files["ACCESS_PATTERNS.md"]


def _slots(source: str, types: dict[str, KeyVar]) -> list[keymatch.Slot]:
    return keymatch.slots(keytemplate.parse(source), types.get)


def test_key_matching_follows_types_and_paths() -> None:
    types = {
        "path": KeyVar("path", "path"),
        "status": KeyVar("status", "enum", values=("PAID", "SHIPPED")),
        "n": KeyVar("n", "int", width=3),
        "id": KeyVar("id", "id"),
    }
    assert keymatch.can_equal(_slots("NODE#{path}", types), _slots("NODE#a#b#c", types))
    assert not keymatch.can_equal(_slots("NODE#{path}", types), _slots("NODE", types))
    assert keymatch.can_equal(_slots("S#{status}", types), _slots("S#PAID", types))
    assert not keymatch.can_equal(_slots("S#{status}", types), _slots("S#NEW", types))
    assert not keymatch.can_equal(_slots("N#{n}", types), _slots("N#12", types))
    assert keymatch.can_equal(_slots("N#{n}", types), _slots("N#{id}", types))
    assert keymatch.can_start(_slots("ORDER", types), _slots("ORDER#{id}", types), strict=True)
    assert not keymatch.can_start(_slots("ORDER", types), _slots("ORDER", types), strict=True)
    # ORDER# does not start ORDERLINE#...: literals that merely share characters
    assert not keymatch.can_start(
        _slots("ORDER", types), _slots("ORDERLINE#{id}", types), strict=True
    )


def test_reads_name_the_top_level_floats_every_returned_entity_agrees_on() -> None:
    text = TIMESERIES.replace(
        'attributes.site = { type = "string", min_length = 1, max_length = 100 }',
        'attributes.site = { type = "string", min_length = 1, max_length = 100 }\n'
        'attributes.lat = { type = "float" }\nattributes.battery = { type = "float" }',
    ).replace(
        'attributes.event_id = { type = "id" }',
        'attributes.event_id = { type = "id" }\nattributes.battery = { type = "int" }',
    )
    device = pipeline.generate(text, "spec.toml")["queries/device.py"]
    assert 'DEVICE_FLOATS = frozenset({"battery", "lat"})' in device
    assert 'DEVICE_EVENT_FLOATS = frozenset({"lat"})' in device  # an Event's battery is an int
    assert "consistent=consistent, floats=DEVICE_FLOATS)" in device  # get_device
    assert "plan_get_devices(tenant, refs), DEVICE_FLOATS)" in device
    assert "floats=DEVICE_EVENT_FLOATS," in device  # device_timeline's Query
    events = pipeline.generate(TIMESERIES, "spec.toml")["queries/event.py"]
    assert "FLOATS" not in events  # a Reading's float is nested: read as stored

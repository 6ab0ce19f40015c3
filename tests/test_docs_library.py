"""docs/library.md's example, run as written (in a temporary directory instead of
/tmp/telemetry): a composite ref and the argument `from` as `from_`."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).parents[1]


def test_the_library_example_runs(tmp_path: Path) -> None:
    text = (ROOT / "docs" / "library.md").read_text().replace("/tmp/telemetry", str(tmp_path))
    example = text.split("The device telemetry spec", 1)[1]
    command = re.search(r"```sh\n(.*?)\n```", example, re.S)
    program = re.search(r"```python\n(.*?)```", example, re.S)
    assert command is not None
    assert program is not None
    argv = command.group(1).split()
    assert argv[0] == "keygraph"
    run = [sys.executable, "-m", "codegen", *argv[1:]]
    subprocess.run(run, cwd=ROOT, check=True, capture_output=True)
    done = subprocess.run(
        [sys.executable, "-c", program.group(1)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    assert done.stdout.splitlines() == ["['e1', None]", "['e1']"]
    assert "It prints `['e1', None]` and `['e1']`." in text

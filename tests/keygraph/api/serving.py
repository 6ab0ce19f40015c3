"""`keygraph serve` as a user runs it: a child process of this checkout on a free port, with
no secret nor AWS settings from the test's environment but those it is given."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from keygraph.serve.secret import SECRET_ENV
from keygraph.stores.dynamodb.local import free_port
from tests.waiting import answering

ROOT = Path(__file__).parents[3]


@dataclass(frozen=True)
class Serving:
    """A `keygraph serve` process that answers at `url`, on `port`."""

    url: str
    port: int
    process: subprocess.Popen[bytes]


@contextmanager
def keygraph_process(
    *argv: str | Path, cwd: Path, env: Mapping[str, str] | None = None
) -> Iterator[Serving]:
    """`keygraph serve *argv` run in `cwd` (its output in serve.log), once it answers;
    stopped afterwards if it still runs."""
    port = free_port()
    inherited = {
        k: v for k, v in os.environ.items() if k != SECRET_ENV and not k.startswith("AWS_")
    }
    environ = {**inherited, "PYTHONPATH": str(ROOT), **(env or {})}
    command = [sys.executable, "-m", "codegen", "serve", *map(str, argv), "--port", str(port)]
    with (cwd / "serve.log").open("wb") as log:
        process = subprocess.Popen(command, cwd=cwd, env=environ, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        answering(f"{url}/healthz", lambda: process.poll() is None)
        yield Serving(url, port, process)
    finally:
        if process.poll() is None:
            process.terminate()
        process.wait(30)


@contextmanager
def keygraph_serve(
    *argv: str | Path, cwd: Path, env: Mapping[str, str] | None = None
) -> Iterator[str]:
    """The URL of `keygraph serve *argv` run in `cwd`, once it answers; stopped afterwards."""
    with keygraph_process(*argv, cwd=cwd, env=env) as serving:
        yield serving.url


def unreported(body: dict[str, Any]) -> dict[str, Any]:
    """An answer's body without its `extensions`, which must report its cost."""
    assert "cost" in body["extensions"], body
    return {key: value for key, value in body.items() if key != "extensions"}

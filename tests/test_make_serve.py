"""`make serve` as the README runs it: its recipe, read from the Makefile, seeds the demo
tenant once and serves the API the spec compiles to with this repository's extension; the
token it prints answers the README's first query, GraphiQL's page holds an admin's, and a
second run seeds nothing more."""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import urllib.request
from pathlib import Path
from typing import Any

from keygraph.serve.secret import SECRET_ENV
from keygraph.stores.dynamodb.local import free_port
from keygraph.tokens import TokenKey, dev_secret, verify
from tests.waiting import answering, wait_for

ROOT = Path(__file__).parents[1]


def _recipe(data: Path, port: int) -> list[list[str]]:
    """The serve target's commands, `$(BIN)` this interpreter's scripts, `$(DATA)` given."""
    text = (ROOT / "Makefile").read_text(encoding="utf-8").replace("\\\n", " ")
    found = re.search(r"^serve: install\n((?:\t.*\n)+)", text, re.M)
    assert found is not None
    commands = []
    for line in found.group(1).splitlines():
        argv = shlex.split(line.replace("$(DATA)", str(data)))
        program = argv[0].replace("$(BIN)/", "")
        if program == "python":
            argv = [sys.executable, *argv[1:]]
        else:  # a console script: its module
            argv = [sys.executable, "-m", {"keygraph": "codegen"}[program], *argv[1:]]
        commands.append(argv)
    commands[-1] += ["--port", str(port)]
    return commands


def _readme_query() -> str:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"## A first query.*?```graphql\n(.*?)```", text, re.S)
    assert found is not None
    return found.group(1)


def _post(url: str, token: str, query: str) -> dict[str, Any]:
    request = urllib.request.Request(
        url,
        json.dumps({"query": query}).encode(),
        {"authorization": f"Bearer {token}", "content-type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as answer:
        body: dict[str, Any] = json.loads(answer.read())
    return body


def test_make_serve_serves_the_readme_query_from_the_spec(tmp_path: Path) -> None:
    port = free_port()
    seed, serve = _recipe(tmp_path, port)
    assert serve[3:8] == ["serve", "--package", "generated", "--extend", "server.extension"]
    env = {k: v for k, v in os.environ.items() if k != SECRET_ENV and not k.startswith("AWS_")}
    env["PYTHONPATH"] = str(ROOT)
    first = subprocess.run(seed, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    again = subprocess.run(seed, cwd=ROOT, env=env, capture_output=True, text=True, check=True)
    assert "wrote" in first.stdout
    assert "nothing written" in again.stdout
    log = tmp_path / "serve.log"
    with log.open("wb") as out:
        process = subprocess.Popen(serve, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}/graphql"
    try:
        answering(f"http://127.0.0.1:{port}/healthz", lambda: process.poll() is None)
        wait_for(lambda: "dev token" in log.read_text(), "the printed token")
        token = log.read_text().split("dev token (tenant demo): ", 1)[1].split()[0]
        key = TokenKey(dev_secret(tmp_path))
        assert verify(token, key).caller.roles == {"admin"}
        answer = _post(url, token, _readme_query())
        assert "errors" not in answer, answer
        data = answer["data"]
        assert data["viewer"] == {"tenant": "demo", "subject": "graphiql", "roles": ["admin"]}
        assert len(data["users"]["edges"]) == 3
        assert data["users"]["pageInfo"]["hasNextPage"] is True
        assert data["orgRoots"]
        assert data["orgRoots"][0]["children"]
        page = urllib.request.Request(url, headers={"accept": "text/html"})
        with urllib.request.urlopen(page, timeout=30) as graphiql:
            html = graphiql.read().decode()
        shown = re.search(r"Bearer ([\w.-]+)", html)
        assert shown is not None
        assert verify(shown.group(1), key).caller.roles == {"admin"}
    finally:
        process.terminate()
        process.wait(30)

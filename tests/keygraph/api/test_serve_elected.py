"""`keygraph serve --workers 2 --redis-url` as a process, on another spec than this
repository's (the social case): one worker is elected to read the change stream for every
host, and a subscriber on each worker gets a write's event from the Redis Stream; without a
Redis URL redis-py is never loaded, and reader settings that cannot work are refused."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from httpx_ws import AsyncWebSocketSession

from codegen.cli import main
from keygraph.serve.cli import EXIT_BAD_INPUT
from keygraph.stores.dynamodb.local import free_port
from keygraph.tokens import issue
from tests.keygraph.api.conftest import CASES
from tests.keygraph.api.serving import (
    ROOT,
    Serving,
    keygraph_process,
    subscribed_on_each_worker,
)
from tests.redis_server import RedisServer
from tests.sockets_held import children
from tests.waiting import wait_for

SPEC = CASES / "social" / "spec.toml"
SECRET = "serve-elected-" + "e" * 32
TOKEN = issue(SECRET, "acme", "m1", roles=["admin"])
HEADERS = {"Authorization": f"Bearer {TOKEN}"}
LEADING = "reading the change stream for every host (term 1)"
WORKER = "multiprocessing.spawn"
POSTS = 'subscription { postsByChanged(memberId: "m1") { kind post { text } } }'
MEMBER = """mutation {
  createMember(input: {memberId: "m1", handle: "ann", name: "Ann"}) { member { handle } }
}"""
POST = 'mutation { createPost(input: {memberId: "m1", text: "hi"}) { post { text } } }'
WRITES = 20
HEARD = 2.0
"""Seconds a subscriber waits for a write's event before the write is made again."""


def _logged(serving: Path, message: str) -> int:
    """How many of the server's JSON log lines (serve.log in `serving`) say `message`."""
    text = (serving / "serve.log").read_text(encoding="utf-8", errors="replace")
    return sum(
        json.loads(line).get("message") == message
        for line in text.splitlines()
        if line.startswith("{") and line.endswith("}")
    )


async def _post(client: httpx.AsyncClient, query: str) -> None:
    answer = await client.post("/graphql", json={"query": query}, headers=HEADERS)
    assert answer.status_code == 200, answer.text
    assert "errors" not in answer.json(), answer.text


async def _write_until_each_hears(serving: Serving, sessions: list[AsyncWebSocketSession]) -> None:
    """Creates a post of m1 again, through either worker, until every subscriber got an
    event of one: a subscription still starting when a write is made may miss that one,
    not the next."""
    waiting = list(sessions)
    async with httpx.AsyncClient(base_url=serving.url, timeout=30) as client:
        await _post(client, MEMBER)
        for _ in range(WRITES):
            await _post(client, POST)
            still = []
            for ws in waiting:
                try:
                    message = await ws.receive_json(timeout=HEARD)
                except TimeoutError:
                    still.append(ws)
                    continue
                assert message["type"] == "next", message
                change = message["payload"]["data"]["postsByChanged"]
                assert change == {"kind": "CREATED", "post": {"text": "hi"}}
            waiting = still
            if not waiting:
                return
    raise AssertionError(f"{len(waiting)} of {len(sessions)} subscribers heard no write")


async def test_with_workers_and_redis_one_worker_reads_the_stream_for_every_host(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    argv = ("--spec", SPEC, "--db", tmp_path / "social.sqlite3", "--workers", "2")
    flags = ("--redis-url", redis_server.url)
    env = {"KEYGRAPH_JWT_SECRET": SECRET}
    with keygraph_process(*argv, *flags, cwd=tmp_path, env=env) as serving:
        workers: list[int] = []

        def two() -> bool:
            workers[:] = children(serving.process.pid, WORKER)
            return len(workers) == 2

        wait_for(two, "two workers", 60)
        wait_for(lambda: _logged(tmp_path, LEADING) == 1, "a worker to take the lease", 60)
        async with contextlib.AsyncExitStack() as stack:
            sessions = await subscribed_on_each_worker(serving, workers, stack, TOKEN, POSTS)
            await _write_until_each_hears(serving, sessions)
        assert _logged(tmp_path, LEADING) == 1
        assert _logged(tmp_path, "reading the change stream for every host (term 2)") == 0


def test_without_a_redis_url_redis_is_never_loaded(tmp_path: Path) -> None:
    program = (
        "import sys\n"
        "from codegen.cli import parser\n"
        "from keygraph.serve import create_app\n"
        "from keygraph.serve.cli import _scale, _served\n"
        f"argv = ['serve', '--package', 'generated', '--db', {str(tmp_path / 'k.sqlite3')!r}]\n"
        "args = parser().parse_args(argv)\n"
        "scale = _scale(args)\n"
        "assert scale.redis_url is None\n"
        "create_app(_served(args, 'generated', scale)[0])\n"
        "assert 'redis' not in sys.modules, 'redis was loaded'\n"
        "assert 'keygraph.serve.elected' not in sys.modules, 'the elected reader was loaded'\n"
    )
    inherited = {k: v for k, v in os.environ.items() if not k.startswith("KEYGRAPH_")}
    env = {**inherited, "PYTHONPATH": str(ROOT), "KEYGRAPH_JWT_SECRET": SECRET}
    subprocess.run([sys.executable, "-c", program], check=True, cwd=ROOT, env=env)


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("KEYGRAPH_READER_LEASE", "0", "KEYGRAPH_READER_LEASE must be positive, not 0.0"),
        ("KEYGRAPH_READER_LEASE", "soon", "KEYGRAPH_READER_LEASE must be a number, not 'soon'"),
        ("KEYGRAPH_REDIS_STREAM_MAX", "1.5", "KEYGRAPH_REDIS_STREAM_MAX must be a whole number"),
    ],
)
def test_reader_settings_that_cannot_work_are_refused(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    variable: str,
    value: str,
    said: str,
) -> None:
    monkeypatch.setenv(variable, value)
    redis = ("--redis-url", f"redis://127.0.0.1:{free_port()}/0")
    argv = ["serve", "--package", "generated", "--db", str(tmp_path / "k.sqlite3"), *redis]
    assert main(argv) == EXIT_BAD_INPUT
    assert said in capsys.readouterr().err

"""A real `redis-server` for the tests: on a free loopback port, in a temporary directory,
without persistence; killed (SIGKILL) and started again on the same port to test what hosts
do while Redis is gone and once it is back."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from keygraph.process import orphan_proof
from keygraph.stores.dynamodb.local import free_port
from tests.waiting import wait_for

if TYPE_CHECKING:
    import redis

HOW_TO_GET = (
    "`redis-server` is not on PATH: install Debian's package (`apt-get install redis-server`, "
    "as .ci/run does)"
)


class RedisUnavailable(RuntimeError):
    """redis-server is missing."""


class RedisServer:
    """One redis-server process; `start`, `kill` and `start` again keep its port."""

    def __init__(self) -> None:
        binary = shutil.which("redis-server")
        if binary is None:
            raise RedisUnavailable(HOW_TO_GET)
        self.binary = binary
        self.port = free_port()
        self._dir = tempfile.TemporaryDirectory(prefix="keygraph-redis-")
        self._process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"redis://127.0.0.1:{self.port}/0"

    def start(self) -> None:
        """Starts it and returns once it answers PING."""
        command = [
            self.binary,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            self._dir.name,
            "--save",
            "",
            "--appendonly",
            "no",
        ]
        log = (Path(self._dir.name) / "redis.log").open("ab")
        self._process = subprocess.Popen(
            orphan_proof(command), stdout=log, stderr=subprocess.STDOUT
        )
        log.close()
        import redis

        client = redis.Redis(port=self.port, socket_connect_timeout=1)
        try:
            wait_for(self._answers(client), "redis-server to answer")
        finally:
            client.close()

    def _answers(self, client: redis.Redis) -> Callable[[], bool]:
        from redis.exceptions import ConnectionError as Refused

        def answers() -> bool:
            assert self._process is not None
            assert self._process.poll() is None, "redis-server exited"
            try:
                return bool(client.ping())
            except Refused:
                return False

        return answers

    def kill(self) -> None:
        """SIGKILL: gone at once, with everything it held."""
        if self._process is not None:
            self._process.kill()
            self._process.wait()
            self._process = None

    def stop(self) -> None:
        self.kill()
        self._dir.cleanup()

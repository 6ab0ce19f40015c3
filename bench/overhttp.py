"""Servers in their own processes on 127.0.0.1, loaded by bench.loadgen from another one."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import tempfile
from pathlib import Path
from types import TracebackType

from bench.machine import peak_rss_mib
from bench.processes import start, stop, wait_answering
from bench.queries import Operation
from bench.stats import RunSummary

HOST = "127.0.0.1"
ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((HOST, 0))
        port: int = sock.getsockname()[1]
        return port


class ServerProcess:
    """`python -m bench.serve <args>` on a free loopback port, one uvicorn worker."""

    def __init__(self, name: str, args: list[str], log_dir: Path) -> None:
        self.name = name
        self.port = free_port()
        self._args = args
        self._log_path = log_dir / f"server-{name}.log"
        self._process: subprocess.Popen[bytes] | None = None
        self.peak_rss_mib: float | None = None

    def launch(self) -> None:
        command = [sys.executable, "-m", "bench.serve", "--port", str(self.port), *self._args]
        with self._log_path.open("wb") as log:
            self._process = start(command, log=log)

    def wait_ready(self, timeout: float = 120.0) -> None:
        if self._process is None:
            raise RuntimeError(f"{self.name} server was not launched")
        try:
            wait_answering(f"http://{HOST}:{self.port}/healthz", self._process, timeout)
        except RuntimeError:
            raise RuntimeError(
                f"{self.name} server exited:\n{self._log_path.read_text()}"
            ) from None
        except TimeoutError:
            self.stop()
            raise

    @property
    def pid(self) -> int:
        if self._process is None:
            raise RuntimeError(f"{self.name} server is not running")
        return self._process.pid

    def stop(self) -> None:
        if self._process is None:
            return
        self.peak_rss_mib = peak_rss_mib(self._process.pid)
        stop(self._process, timeout=15)
        self._process = None


class Servers:
    """Several servers launched together (their start-ups overlap), stopped together."""

    def __init__(self, servers: list[ServerProcess]) -> None:
        self.servers = {server.name: server for server in servers}

    def __enter__(self) -> dict[str, ServerProcess]:
        try:
            for server in self.servers.values():
                server.launch()
            for server in self.servers.values():
                server.wait_ready()
        except BaseException:
            self.stop()
            raise
        return self.servers

    def stop(self) -> None:
        for server in self.servers.values():
            server.stop()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()


def run_loadgen(
    server: ServerProcess,
    op: Operation,
    headers: dict[str, str],
    concurrency: int,
    duration_s: float,
    max_requests: int,
    warmup: int,
) -> tuple[RunSummary, str | None]:
    """One load run against a server, from a separate load-generator process."""
    with tempfile.NamedTemporaryFile("wb", suffix=".json", delete=False) as body:
        body.write(json.dumps(op.body()).encode())
    command = [
        sys.executable,
        "-m",
        "bench.loadgen",
        "--port",
        str(server.port),
        "--body-file",
        body.name,
        "--concurrency",
        str(concurrency),
        "--duration",
        str(duration_s),
        "--max-requests",
        str(max_requests),
        "--warmup",
        str(warmup),
        "--server-pid",
        str(server.pid),
        *(arg for name, value in headers.items() for arg in ("--header", f"{name}: {value}")),
    ]
    try:
        done = subprocess.run(
            command, cwd=ROOT, capture_output=True, check=False, timeout=duration_s + 900
        )
    finally:
        Path(body.name).unlink()
    if done.returncode != 0:
        raise RuntimeError(f"load generator failed on {op.name}: {done.stderr.decode()[-2000:]}")
    answer = json.loads(done.stdout)
    summary = RunSummary(**answer["summary"])
    return summary, answer["first_error"]

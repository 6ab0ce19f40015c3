"""Server processes for the benchmarks: start one, wait until a URL of it answers, stop it
(terminate, then kill past a deadline)."""

from __future__ import annotations

import contextlib
import subprocess
import time
import urllib.request
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import IO

ROOT = Path(__file__).resolve().parent.parent
POLL_S = 0.1


def start(
    command: Sequence[str],
    env: Mapping[str, str] | None = None,
    log: IO[bytes] | None = None,
    root: Path = ROOT,
) -> subprocess.Popen[bytes]:
    """`command` from the repository's root (or another checkout's), its output to `log`
    (or nowhere)."""
    out = subprocess.DEVNULL if log is None else log
    return subprocess.Popen(command, cwd=root, env=env, stdout=out, stderr=out)


def wait_answering(url: str, process: subprocess.Popen[bytes], timeout: float = 120) -> None:
    """Returns once `url` answers; RuntimeError if `process` exits first, TimeoutError past
    the timeout."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server of {url} exited with {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(POLL_S)
    raise TimeoutError(f"{url} did not answer within {timeout:.0f} s")


def stop(process: subprocess.Popen[bytes], timeout: float = 30) -> None:
    """SIGTERM, then SIGKILL if it has not exited within `timeout`."""
    process.terminate()
    try:
        process.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()


@contextlib.contextmanager
def serving(
    command: Sequence[str], url: str, env: Mapping[str, str] | None = None, timeout: float = 120
) -> Iterator[subprocess.Popen[bytes]]:
    """`command` started, `url` answering, stopped on leaving."""
    process = start(command, env)
    try:
        wait_answering(url, process, timeout)
        yield process
    finally:
        stop(process)

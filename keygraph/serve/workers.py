"""Serving an app with uvicorn: in this process, or as a supervisor of N worker processes
sharing one listening socket, each building its app itself (both `keygraph serve` and the
repository's server run here).

SIGTERM and SIGINT stop taking connections, let the requests in flight finish (up to the
shutdown timeout), then return, so the caller exits with status 0 after its cleanup. A
supervisor passes the signal on to its workers and waits for them; a worker that dies is
replaced; workers die with their supervisor, however it ends (keygraph/process.py).
"""

from __future__ import annotations

import contextlib
import logging
import multiprocessing
import os
import signal
import socket
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from multiprocessing.process import BaseProcess
from types import FrameType
from typing import Generic, TypeVar

import uvicorn

from keygraph.process import die_with_parent

log = logging.getLogger("keygraph.serve")

T = TypeVar("T")
STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
RESTART_PAUSE = 1.0
"""Seconds between replacing a dead worker and the next check."""
BACKLOG = 2048
Runner = Callable[[Callable[[], None]], object]
"""How a process calls uvicorn's loop (the repository's server gives it stack headroom)."""


class Stopped(Exception):
    """A stop signal arrived (raised from its handler once uvicorn has drained)."""


def _raise_stopped(signum: int, _frame: FrameType | None) -> None:
    raise Stopped(signal.Signals(signum).name)


@contextlib.contextmanager
def stop_on_signals() -> Iterator[None]:
    """uvicorn drains on SIGTERM/SIGINT and then raises the signal again: this turns that into
    `Stopped`, caught here, so the process winds down normally (default SIGTERM handling
    would end it on the spot, skipping every cleanup)."""
    previous = {sig: signal.signal(sig, _raise_stopped) for sig in STOP_SIGNALS}
    try:
        yield
    except Stopped as stop:
        log.info("stopped by %s", stop)
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def directly(run: Callable[[], None]) -> None:
    """The default Runner: `run()`."""
    run()


def serve_here(config: uvicorn.Config, runner: Runner = directly) -> None:
    """Serve `config`'s app in this process until a stop signal, then drain and return."""
    server = uvicorn.Server(config)
    with stop_on_signals():
        runner(server.run)


def _worker(
    config: Callable[[T], uvicorn.Config],
    beside: T,
    sock: socket.socket,
    supervisor: int,
    runner: Runner,
) -> None:
    """A worker process: its app built here, served on the supervisor's socket until told
    to stop."""
    die_with_parent(signal.SIGTERM, supervisor)  # exits at once if it is already gone
    server = uvicorn.Server(config(beside))
    with stop_on_signals():
        runner(lambda: server.run(sockets=[sock]))


class Supervisor(Generic[T]):
    """Runs `workers` processes on one socket at `host`:`port` and keeps them running.

    `config` builds a worker's uvicorn configuration, its app included, in the worker
    (it and `runner` are pickled to it: module-level functions, or partials of them).
    `beside` is what the supervisor runs for as long as the workers do (the server's
    change-stream relay); what it yields is given to `config`. `exited` hears of a dead
    worker's pid before it is replaced."""

    def __init__(
        self,
        config: Callable[[T], uvicorn.Config],
        host: str,
        port: int,
        workers: int,
        shutdown_timeout: float,
        *,
        beside: Callable[[], AbstractContextManager[T]],
        runner: Runner = directly,
        exited: Callable[[int], None] = lambda _pid: None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"workers must be at least 1, not {workers}")
        self.config = config
        self.count = workers
        self.shutdown_timeout = shutdown_timeout
        self.beside = beside
        self.runner = runner
        self.exited = exited
        self.context = multiprocessing.get_context("spawn")
        self.stopping = False
        self.socket = socket.create_server((host, port), backlog=BACKLOG, reuse_port=False)
        self.workers: list[BaseProcess] = []
        self._shared: T | None = None

    def _start(self) -> BaseProcess:
        process = self.context.Process(
            target=_worker,
            args=(self.config, self._shared, self.socket, os.getpid(), self.runner),
            name="keygraph-worker",
        )
        process.start()
        return process

    def _stop(self, signum: int, _frame: FrameType | None) -> None:
        self.stopping = True

    def run(self) -> None:
        """Serve until a stop signal, then stop every worker (each drains) and return."""
        previous = {sig: signal.signal(sig, self._stop) for sig in STOP_SIGNALS}
        try:
            with self.beside() as self._shared:
                try:
                    self._supervise()
                finally:
                    self._stop_workers()  # before `beside` ends: they may use it to the last
        finally:
            self.socket.close()
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _supervise(self) -> None:
        self.workers = [self._start() for _ in range(self.count)]
        log.info("serving with %d workers", len(self.workers))
        while not self.stopping:
            time.sleep(RESTART_PAUSE)
            for index, worker in enumerate(self.workers):
                if not worker.is_alive() and not self.stopping:
                    log.warning(
                        "worker %s exited with %s; replacing it", worker.pid, worker.exitcode
                    )
                    self.exited(worker.pid or 0)
                    self.workers[index] = self._start()

    def _stop_workers(self) -> None:
        for worker in self.workers:
            if worker.is_alive() and worker.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    worker.terminate()  # SIGTERM: the worker drains, then exits
        deadline = time.monotonic() + self.shutdown_timeout + 5
        for worker in self.workers:
            worker.join(max(0.0, deadline - time.monotonic()))
            if worker.is_alive():
                worker.kill()
                worker.join()

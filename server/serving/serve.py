"""Serving the app with uvicorn (on httptools and uvloop, server/serving/protocol.py): in this
process, or with `workers` > 1 as a supervisor of that many worker processes sharing one
listening socket.

SIGTERM and SIGINT stop taking connections, let the requests in flight finish (up to
`shutdown_timeout`), then exit with status 0; the caller's cleanup (DynamoDB Local) runs.
A supervisor passes the signal on to its workers and waits for them; a worker that dies is
replaced; workers die with their supervisor, however it ends.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import signal
import socket
import time
from collections.abc import Iterator
from multiprocessing.process import BaseProcess
from pathlib import Path
from types import FrameType

import uvicorn

from keygraph.process import die_with_parent
from keygraph.serve import request_log as json_logging
from keygraph.store import Store
from server.edge.app import create_app
from server.observability import exposition
from server.realtime.relayed import RelayedStream
from server.serving.backends import worker_store
from server.serving.datastack import run_with_headroom
from server.serving.memory import tune_malloc
from server.serving.protocol import uvicorn_options
from server.serving.relay_thread import relaying
from server.settings import Settings

log = logging.getLogger("keygraph.serve")

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)
RESTART_PAUSE = 1.0
"""Seconds between replacing a dead worker and the next check."""
BACKLOG = 2048
RELAY_SOCKET = "stream-relay.sock"
"""The supervisor's stream relay's socket, in the data directory."""


class Stopped(Exception):
    """A stop signal arrived (raised from its handler once uvicorn has drained)."""


def _raise_stopped(signum: int, _frame: FrameType | None) -> None:
    raise Stopped(signal.Signals(signum).name)


@contextlib.contextmanager
def _stop_on_signals() -> Iterator[None]:
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


def _config(
    settings: Settings, store: Store, relay: Path | None = None, *, own_stream: bool = True
) -> uvicorn.Config:
    """uvicorn's configuration of the app; its subscriptions fed by the relay at `relay`
    when given, else by the store's own stream when `own_stream`, else none."""
    stream = None if relay is None else RelayedStream(relay)
    return uvicorn.Config(
        create_app(settings, store, close_store=True, stream=stream, own_stream=own_stream),
        host=settings.host,
        port=settings.port,
        log_config=None,
        access_log=False,
        timeout_graceful_shutdown=max(1, round(settings.shutdown_timeout)),
        timeout_keep_alive=max(1, round(settings.keep_alive)),
        backlog=BACKLOG,
        proxy_headers=False,  # the app reads neither the client's address nor the scheme
        ws_max_size=settings.limits.max_body_bytes,  # a message is bounded as a body is
        **uvicorn_options(),
    )


def serve_here(settings: Settings, store: Store) -> None:
    """Serve in this process until a stop signal, then drain and return."""
    server = uvicorn.Server(_config(settings, store))
    with _stop_on_signals():
        run_with_headroom(server.run)


def _worker(
    settings: Settings,
    local_endpoint: str | None,
    sock: socket.socket,
    supervisor: int,
    relay: Path | None,
) -> None:
    """A worker process: serve on the supervisor's socket until told to stop, its
    subscriptions fed by the supervisor's relay (none when it has none)."""
    die_with_parent(signal.SIGTERM, supervisor)  # exits at once if it is already gone
    tune_malloc()
    json_logging.configure()
    store = worker_store(settings, local_endpoint)
    server = uvicorn.Server(_config(settings, store, relay, own_stream=False))
    with _stop_on_signals():
        run_with_headroom(lambda: server.run(sockets=[sock]))


class Supervisor:
    """Runs `settings.workers` worker processes on one socket and keeps them running."""

    def __init__(self, settings: Settings, local_endpoint: str | None) -> None:
        self.settings = settings
        self.local_endpoint = local_endpoint
        self.context = multiprocessing.get_context("spawn")
        self.stopping = False
        self.socket = socket.create_server(
            (settings.host, settings.port), backlog=BACKLOG, reuse_port=False
        )
        self.workers: list[BaseProcess] = []
        self.relay: Path | None = None

    def _start(self) -> BaseProcess:
        process = self.context.Process(
            target=_worker,
            args=(self.settings, self.local_endpoint, self.socket, os.getpid(), self.relay),
            name="keygraph-worker",
        )
        process.start()
        return process

    def _stop(self, signum: int, _frame: FrameType | None) -> None:
        self.stopping = True

    def run(self) -> None:
        """Serve until a stop signal, then stop every worker (each drains) and return."""
        previous = {sig: signal.signal(sig, self._stop) for sig in STOP_SIGNALS}
        settings = self.settings
        try:
            with relaying(
                lambda: worker_store(settings, self.local_endpoint),
                settings.data_dir / RELAY_SOCKET,
                settings.poll_interval,
            ) as self.relay:
                try:
                    self._supervise()
                finally:
                    self._stop_workers()  # before the relay ends: they read it to the last
        finally:
            self.socket.close()
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _supervise(self) -> None:
        self.workers = [self._start() for _ in range(self.settings.workers)]
        log.info("serving with %d workers", len(self.workers))
        while not self.stopping:
            time.sleep(RESTART_PAUSE)
            for index, worker in enumerate(self.workers):
                if not worker.is_alive() and not self.stopping:
                    log.warning(
                        "worker %s exited with %s; replacing it", worker.pid, worker.exitcode
                    )
                    exposition.worker_exited(worker.pid or 0)
                    self.workers[index] = self._start()

    def _stop_workers(self) -> None:
        for worker in self.workers:
            if worker.is_alive() and worker.pid is not None:
                with contextlib.suppress(ProcessLookupError):
                    worker.terminate()  # SIGTERM: the worker drains, then exits
        deadline = time.monotonic() + self.settings.shutdown_timeout + 5
        for worker in self.workers:
            worker.join(max(0.0, deadline - time.monotonic()))
            if worker.is_alive():
                worker.kill()
                worker.join()


def serve(settings: Settings, store: Store, local_endpoint: str | None) -> None:
    """Serve the app on `store` (one process), or with `settings.workers` processes each
    opening the same data (`store` is then closed and left to the workers)."""
    if settings.workers == 1:
        exposition.serve_port(settings)
        serve_here(settings, store)
        return
    asyncio.run(store.close())
    with exposition.workers_directory(settings):
        exposition.serve_port(settings)
        Supervisor(settings, local_endpoint).run()

"""Serving the app with uvicorn (on httptools and uvloop, server/serving/protocol.py): in this
process, or with `workers` > 1 under the runtime's supervisor (keygraph/serve/workers.py),
which runs the change stream's relay beside the workers it keeps on one listening socket.

SIGTERM and SIGINT stop taking connections, let the requests in flight finish (up to
`shutdown_timeout`), then exit with status 0; the caller's cleanup (DynamoDB Local) runs.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from pathlib import Path

import uvicorn

from keygraph.serve import request_log as json_logging
from keygraph.serve.metrics import multiprocess_directory, worker_exited
from keygraph.serve.workers import BACKLOG, Supervisor, serve_here
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

RELAY_SOCKET = "stream-relay.sock"
"""The supervisor's stream relay's socket, in the data directory."""


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


def _worker_config(
    settings: Settings, local_endpoint: str | None, relay: Path | None
) -> uvicorn.Config:
    """A worker process's app, built in it: its subscriptions fed by the supervisor's
    relay (none when it has none)."""
    tune_malloc()
    json_logging.configure()
    store = worker_store(settings, local_endpoint)
    return _config(settings, store, relay, own_stream=False)


def serve(settings: Settings, store: Store, local_endpoint: str | None) -> None:
    """Serve the app on `store` (one process), or with `settings.workers` processes each
    opening the same data (`store` is then closed and left to the workers)."""
    if settings.workers == 1:
        exposition.serve_port(settings)
        serve_here(_config(settings, store), run_with_headroom)
        return
    asyncio.run(store.close())
    with multiprocess_directory(settings.metrics_enabled):
        exposition.serve_port(settings)
        Supervisor(
            functools.partial(_worker_config, settings, local_endpoint),
            settings.host,
            settings.port,
            settings.workers,
            settings.shutdown_timeout,
            beside=lambda: relaying(
                lambda: worker_store(settings, local_endpoint),
                settings.data_dir / RELAY_SOCKET,
                settings.poll_interval,
            ),
            runner=run_with_headroom,
            exited=worker_exited,
        ).run()

"""Serving the compiled API (server/compiled.py) with keygraph serve's runner
(keygraph/serve/serving.py) on uvicorn's httptools and uvloop (server/serving/protocol.py):
in this process, or with `workers` > 1 under the runtime's supervisor, which runs the change
stream's relay beside the workers it keeps on one listening socket (without Redis).

SIGTERM and SIGINT stop taking connections, let the requests in flight finish (up to
`shutdown_timeout`), then exit with status 0; the caller's cleanup (DynamoDB Local) runs.
"""

from __future__ import annotations

import contextlib
import functools
from contextlib import AbstractContextManager
from pathlib import Path

from keygraph.serve import request_log as json_logging
from keygraph.serve.served import Served
from keygraph.serve.serving import Listening
from keygraph.serve.serving import serve as serve_served
from keygraph.store import Store
from server.compiled import compiled
from server.serving.backends import worker_store
from server.serving.datastack import run_with_headroom
from server.serving.memory import tune_malloc
from server.serving.protocol import uvicorn_options
from server.serving.relay_thread import relaying
from server.serving.relayed import RelayedStream
from server.settings import Settings

RELAY_SOCKET = "stream-relay.sock"
"""The supervisor's stream relay's socket, in the data directory."""


def listening(settings: Settings) -> Listening:
    """Where and how the settings serve: their address, workers, drain, keep-alive, metrics
    port and garbage collector, with the server's HTTP protocol, and uvicorn's logs from
    INFO up (a stop is logged as it begins)."""
    return Listening(
        settings.host,
        settings.port,
        settings.workers,
        shutdown_timeout=settings.shutdown_timeout,
        keep_alive=settings.keep_alive,
        metrics_port=settings.metrics_port,
        metrics_host=settings.metrics_host,
        gc_young_threshold=settings.gc_young_threshold,
        options={
            "log_level": None,
            "proxy_headers": False,  # the app reads neither the client's address nor scheme
            **uvicorn_options(),
        },
    )


def _worker_served(settings: Settings, local_endpoint: str | None, relay: Path | None) -> Served:
    """A worker process's app, built in it: its subscriptions fed by the supervisor's
    relay, or without one (with Redis) by the Redis Stream (none when the store has no
    stream)."""
    tune_malloc()
    json_logging.configure()
    store = worker_store(settings, local_endpoint)
    return compiled(settings, store, None if relay is None else RelayedStream(relay))


def serve(settings: Settings, store: Store, local_endpoint: str | None) -> None:
    """Serve the compiled API on `store` (one process), or with `settings.workers`
    processes each opening the same data (`store` is then closed and left to the workers)."""
    relay = settings.data_dir / RELAY_SOCKET
    # with workers, this process's app is built only to be closed: fed by the relay, it
    # opens no change stream beside the relay's
    stream = None if settings.workers == 1 else RelayedStream(relay)

    def beside() -> AbstractContextManager[Path | None]:
        """The workers' relay; none with Redis, where every worker's hub reads the Redis
        Stream and the elected worker alone reads the change stream (server/compiled.py)."""
        if settings.redis_url is not None:
            return contextlib.nullcontext(None)
        return relaying(
            lambda: worker_store(settings, local_endpoint), relay, settings.poll_interval
        )

    serve_served(
        compiled(settings, store, stream),
        functools.partial(_worker_served, settings, local_endpoint),
        listening(settings),
        beside=beside,
        runner=run_with_headroom,
    )

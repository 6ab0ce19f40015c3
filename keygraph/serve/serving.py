"""A Served app run by uvicorn until stopped: in this process, or by a supervisor's workers
(workers.py), each building its own; what `keygraph serve` and the repository's server both
run, each with the Served it builds from its own settings."""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

from .gc_tuning import GC_YOUNG_THRESHOLD, tune_for_serving
from .served import Served
from .workers import Runner, directly

if TYPE_CHECKING:
    import uvicorn

T = TypeVar("T")


@dataclass(frozen=True)
class Listening:
    """Where and how the app is served: its address, its worker processes, how long a stop
    waits for requests in flight (None: the Served's request timeout) and an idle
    connection stays open, the metrics' own port, the young generation's garbage-collector
    threshold once the app is built (None: Python's own), and more of uvicorn's options."""

    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    shutdown_timeout: float | None = None
    keep_alive: float = 5.0
    metrics_port: int | None = None
    metrics_host: str = "127.0.0.1"
    gc_young_threshold: int | None = GC_YOUNG_THRESHOLD
    options: Mapping[str, Any] = field(default_factory=dict)
    """More `uvicorn.Config` arguments (the repository's server's HTTP protocol)."""

    def drain(self, request_timeout: float) -> float:
        """Seconds a stop waits for the requests in flight, which run at most
        `request_timeout` seconds."""
        return request_timeout if self.shutdown_timeout is None else self.shutdown_timeout

    def config(self, app: Any, request_timeout: float) -> uvicorn.Config:
        """uvicorn's configuration of `app`, whose requests run at most `request_timeout`
        seconds."""
        from .sockets import uvicorn_config

        options = {
            "timeout_graceful_shutdown": max(1, round(self.drain(request_timeout))),
            "timeout_keep_alive": max(1, round(self.keep_alive)),
            **self.options,
        }
        built: uvicorn.Config = uvicorn_config(app, self.host, self.port, **options)
        return built


def nothing_beside() -> AbstractContextManager[None]:
    """What a supervisor runs beside its workers by default: nothing."""
    return contextlib.nullcontext(None)


def serve(
    first: Served,
    worker: Callable[[T], Served],
    listening: Listening,
    *,
    beside: Callable[[], AbstractContextManager[T]] = nothing_beside,  # type: ignore[assignment]
    runner: Runner = directly,
) -> None:
    """Serves `first` in this process until a stop signal drains it; or, with several
    workers, closes it and runs the workers, each serving what `worker` builds in it from
    what `beside` yields (the supervisor runs `beside` as long as they do; `worker` is
    pickled to them: a module-level function, or a partial of one)."""
    from .metrics import multiprocess_directory, worker_exited
    from .workers import Supervisor, serve_here

    if listening.workers == 1:
        _serve_metrics_port(listening)
        serve_here(config(first, listening), runner)
        return
    asyncio.run(closed(first))  # each worker builds its own
    with multiprocess_directory(first.metered):
        _serve_metrics_port(listening)
        Supervisor(
            functools.partial(_worker_config, worker, listening),
            listening.host,
            listening.port,
            listening.workers,
            listening.drain(first.request_timeout),
            beside=beside,
            runner=runner,
            exited=worker_exited,
        ).run()


def config(served: Served, listening: Listening) -> uvicorn.Config:
    """uvicorn's configuration of the app `served` builds, as `listening` says; what was
    built so far is then frozen out of the collector's scans (gc_tuning.py)."""
    from .app import create_app

    built = listening.config(create_app(served), served.request_timeout)
    if listening.gc_young_threshold is not None:
        tune_for_serving(listening.gc_young_threshold)
    return built


async def closed(served: Served) -> None:
    """Closes what the process built to check it can serve (its store, its link, its
    tracer provider)."""
    await served.store.close()
    for close in served.closing:
        await close()
    if served.tracer_provider is not None:
        served.tracer_provider.shutdown()


def _worker_config(
    worker: Callable[[T], Served], listening: Listening, shared: T
) -> uvicorn.Config:
    """A worker process's app, built in it."""
    from . import request_log

    request_log.configure()
    return config(worker(shared), listening)


def _serve_metrics_port(listening: Listening) -> None:
    """/metrics on a port of its own, every worker's values, when one is asked for."""
    if listening.metrics_port is not None:
        from prometheus_client import start_http_server

        from .metrics import registry

        start_http_server(listening.metrics_port, listening.metrics_host, registry())

"""One benchmark server in this process: `python -m bench.serve --port P --target T ...`,
one worker on 127.0.0.1 (started and stopped by bench.overhttp). Idle keep-alive
connections are kept for minutes: a load-generator connection may wait for slow peers.

`--stack` picks the HTTP server under the app (bench/stacks.py compares them): uvicorn on h11
and asyncio's loop, uvicorn on httptools and uvloop, keygraph's own serving protocol (what
`python -m server serve` runs), or Granian."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

import uvicorn
from starlette.types import ASGIApp

from bench.dataset import TENANTS, load_items
from bench.peer.app import peer_app
from bench.targets import VARIANTS, bench_settings, floor_app, keygraph_app, open_store
from generated.table import TABLE
from server.edge.gc_tuning import tune_for_serving
from server.serving.datastack import run_with_headroom
from server.serving.protocol import uvicorn_options

Stack = Literal["keygraph", "uvicorn-h11", "uvicorn-httptools", "granian"]
STACKS: tuple[Stack, ...] = ("keygraph", "uvicorn-h11", "uvicorn-httptools", "granian")
KEEP_ALIVE_S = 300
_ARGS_VARIABLE = "KEYGRAPH_BENCH_SERVE_ARGS"


def build(args: argparse.Namespace) -> ASGIApp:
    if args.target == "peer":
        return peer_app(args.endpoint, TENANTS[0], TABLE.name)
    if args.target == "floor":
        tenant = TENANTS[0]
        return floor_app(load_items(Path(args.items))[tenant], tenant)
    settings = bench_settings(Path(args.data_dir), args.store, args.endpoint)
    return keygraph_app(settings, open_store(settings), args.target)


def granian_app() -> ASGIApp:
    """The app a Granian worker serves, built from the arguments its parent was given."""
    args = argparse.Namespace(**json.loads(os.environ[_ARGS_VARIABLE]))
    app = build(args)
    tune_for_serving()
    return app


def _serve_granian(args: argparse.Namespace) -> None:
    from granian.constants import Interfaces, Loops
    from granian.http import HTTP1Settings
    from granian.server import Server

    os.environ[_ARGS_VARIABLE] = json.dumps(vars(args))
    Server(
        "bench.serve:granian_app",
        address="127.0.0.1",
        port=args.port,
        interface=Interfaces.ASGI,
        workers=1,
        loop=Loops.uvloop,
        factory=True,
        log_access=False,
        http1_settings=HTTP1Settings(keep_alive=True),
    ).serve()


def _serve_uvicorn(app: ASGIApp, args: argparse.Namespace) -> None:
    stack: Stack = args.stack
    if stack == "keygraph":
        options = uvicorn_options()
    else:
        h11 = stack == "uvicorn-h11"
        options = {"http": "h11" if h11 else "httptools", "loop": "asyncio" if h11 else "uvloop"}
    tune_for_serving()  # every server alike, floor included
    run_with_headroom(  # every server alike: no chunk-boundary thrash by chance of depth
        lambda: uvicorn.run(
            app,
            host="127.0.0.1",
            port=args.port,
            workers=1,
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_keep_alive=KEEP_ALIVE_S,
            proxy_headers=False,  # as `python -m server serve`
            **options,
        )
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m bench.serve", description=__doc__)
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--target", choices=(*VARIANTS, "peer"), required=True)
    parser.add_argument("--store", choices=("embedded", "dynamodb-local"), default="embedded")
    parser.add_argument("--data-dir", default=".keygraph")
    parser.add_argument("--endpoint", default=None, help="DynamoDB Local's URL")
    parser.add_argument("--items", help="the dataset's items file (floor)")
    parser.add_argument("--stack", choices=STACKS, default="keygraph", help="(keygraph)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    if args.stack == "granian":
        _serve_granian(args)
        return
    _serve_uvicorn(build(args), args)


if __name__ == "__main__":
    main()

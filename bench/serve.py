"""One benchmark server in this process: `python -m bench.serve --port P --target T ...`,
one worker on 127.0.0.1 on the stack `python -m server serve` runs (started and stopped by
bench.overhttp). Idle keep-alive connections are kept for minutes: a load-generator
connection may wait for slow peers."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

import uvicorn
from starlette.types import ASGIApp

from bench.dataset import TENANTS, load_items
from bench.peer.app import peer_app
from bench.targets import VARIANTS, bench_settings, floor_app, keygraph_app, open_store
from generated.table import TABLE
from keygraph.serve.gc_tuning import tune_for_serving
from server.serving.datastack import run_with_headroom
from server.serving.protocol import uvicorn_options

KEEP_ALIVE_S = 300


def build(args: argparse.Namespace) -> ASGIApp:
    if args.target == "peer":
        return peer_app(args.endpoint, TENANTS[0], TABLE.name)
    if args.target == "floor":
        tenant = TENANTS[0]
        return floor_app(load_items(Path(args.items))[tenant], tenant)
    settings = bench_settings(Path(args.data_dir), args.store, args.endpoint)
    return keygraph_app(settings, open_store(settings), args.target)


def _serve(app: ASGIApp, port: int) -> None:
    tune_for_serving()  # every server alike, floor included
    run_with_headroom(  # every server alike: no chunk-boundary thrash by chance of depth
        lambda: uvicorn.run(
            app,
            host="127.0.0.1",
            port=port,
            workers=1,
            log_level="warning",
            access_log=False,
            lifespan="on",
            timeout_keep_alive=KEEP_ALIVE_S,
            proxy_headers=False,  # as `python -m server serve`
            **uvicorn_options(),
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
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    _serve(build(args), args.port)


if __name__ == "__main__":
    main()

"""`keygraph serve` and `keygraph token`: a generated package's API over HTTP on the embedded
store (a SQLite file) or DynamoDB, and development tokens for it, both with the secret of
KEYGRAPH_JWT_SECRET (at least 32 characters, as the server asks). What serving needs
(Starlette, uvicorn, PyJWT) is imported only to serve: compiling a spec needs none of it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from keygraph.errors import KeygraphError
from keygraph.plan import TableDef
from keygraph.store import Store

from .secret import SECRET_ENV, secret

DEFAULT_DB = Path(".keygraph") / "keygraph.sqlite3"
EXIT_BAD_INPUT = 2


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `serve` and `token` commands, added to a command line's `commands`."""
    about = (
        "serve a generated package's GraphQL API (its api.graphql) over HTTP at /graphql; "
        f"callers send a bearer token signed with {SECRET_ENV} (`keygraph token` makes one)"
    )
    serve = commands.add_parser("serve", help=about, description=about)
    source = serve.add_mutually_exclusive_group(required=True)
    source.add_argument("--spec", type=Path, help="a spec, compiled as the server starts")
    source.add_argument("--package", help="a generated package: its directory or import name")
    serve.add_argument(
        "--db", type=Path, default=DEFAULT_DB, help=f"the SQLite file served (default {DEFAULT_DB})"
    )
    serve.add_argument("--endpoint-url", help="serve a DynamoDB table at this endpoint instead")
    serve.add_argument("--region", help="DynamoDB's region (default: AWS_REGION or the config)")
    serve.add_argument("--table-name", help="the table's name when not the spec's")
    serve.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1")
    serve.add_argument("--port", type=int, default=8000, help="default 8000")
    about = f"print a development token signed with {SECRET_ENV}"
    token = commands.add_parser("token", help=about, description=about)
    token.add_argument("--tenant", required=True)
    token.add_argument("--sub", help="the caller's subject (what owner rules compare)")
    token.add_argument("--role", action="append", help="a role (repeat for several)")
    token.add_argument("--ttl", type=int, default=86400, help="seconds it is valid (a day)")


def token(args: argparse.Namespace) -> int:
    from keygraph.tokens import issue

    try:
        print(issue(secret(), args.tenant, args.sub, args.ttl, args.role))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0


def serve(args: argparse.Namespace, package: str) -> int:
    """Serves the imported `package` until stopped."""
    import uvicorn

    from .app import create_app
    from .package import served, table_of

    try:
        signing = secret()
        store = _store(args, table_of(package, args.table_name))
        app = create_app(served(package, store, signing))
    except (ValueError, KeygraphError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ImportError as exc:
        print(f"error: {package} has no API to serve ({exc}); generate it again", file=sys.stderr)
        return EXIT_BAD_INPUT
    print(f"serving {package} on http://{args.host}:{args.port}/graphql", file=sys.stderr)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def _store(args: argparse.Namespace, table: TableDef) -> Store:
    if args.endpoint_url is None and args.region is None:
        from keygraph.stores.embedded.store import EmbeddedStore

        args.db.parent.mkdir(parents=True, exist_ok=True)
        return EmbeddedStore(table, path=args.db)
    from keygraph.stores.dynamodb.store import DynamoDBStore

    return DynamoDBStore(table, endpoint_url=args.endpoint_url, region=args.region)

"""`keygraph serve` and `keygraph token`: a generated package's API over HTTP on the embedded
store (a SQLite file) or DynamoDB, and development tokens for it, both with the secret of
KEYGRAPH_JWT_SECRET (at least 32 characters, as the server asks), else a development secret
kept beside the SQLite file; in that case or with --dev, GraphiQL's page holds a development
token and answers report their store calls and waves. Persisted queries are always taken;
--trusted-documents runs only a manifest's documents. Metrics are off unless a token
(/metrics on the app's port) or a port of their own is given, and traces unless
KEYGRAPH_TRACING says (trace_settings.py); a request is cut after KEYGRAPH_REQUEST_TIMEOUT
seconds (request_settings.py) and each one logged as a JSON line on stderr (request_log.py),
as the repository's server does. --workers N serves with N processes on one port
(workers.py), each with its share of a tenant's budget, or the whole budget shared through
Redis with --redis-url (keygraph/shared/); both default to the variables the server reads
(scale_settings.py). With Redis, one reader elected among every worker of every host reads
the change stream into a Redis Stream each worker's subscriptions are fed from (elected.py;
its lease and the stream's bounds from the server's variables: reader_settings.py). A
tenant holds at most --max-subscriptions-per-tenant subscriptions in a worker, and a worker
--max-subscriptions-per-worker, by default the server's variables too
(subscription_settings.py). What serving needs (Starlette, uvicorn, PyJWT) is imported only
to serve: compiling a spec needs none of it."""

from __future__ import annotations

import argparse
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from keygraph.errors import KeygraphError
from keygraph.plan import TableDef
from keygraph.store import Store

from .budget import CAPACITY, REFILL_PER_SECOND
from .limits import MAX_COST
from .scale_settings import SCALE_VARIABLES, ScaleSettings, scale_values
from .secret import MIN_SECRET, SECRET_ENV
from .served import Served
from .subscription_settings import (
    SUBSCRIPTION_FIELDS,
    SubscriptionSettings,
    subscription_settings,
)

if TYPE_CHECKING:
    from .elected import Elected

DEFAULT_DB = Path(".keygraph") / "keygraph.sqlite3"
EXIT_BAD_INPUT = 2
METRICS_TOKEN_ENV = "KEYGRAPH_METRICS_TOKEN"
MIN_METRICS_TOKEN = 16
SUBSCRIPTION_FLAGS = {
    "max_subscriptions_per_tenant": "subscriptions one tenant holds at once in a worker; "
    "a subscribe past them is an error SUBSCRIPTION_LIMIT",
    "max_subscriptions_per_worker": "subscriptions a worker holds at once, every tenant's",
}
"""What each subscription setting's flag says."""


def add_package_options(
    package: argparse._ActionsContainer, extend: argparse._ActionsContainer
) -> None:
    """The --package and repeatable --extend options that `serve` and `schema` take."""
    package.add_argument("--package", help="a generated package: its directory or import name")
    extend.add_argument(
        "--extend",
        action="append",
        default=[],
        metavar="MODULE[:NAME]",
        help="add a keygraph.api.Extension's fields (NAME by default EXTENSION); repeatable",
    )


def add_parsers(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `serve` and `token` commands, added to a command line's `commands`."""
    about = (
        "serve a generated package's GraphQL API (its api.graphql) over HTTP at /graphql; "
        f"callers send a bearer token signed with {SECRET_ENV} (`keygraph token` makes one)"
    )
    serve = commands.add_parser("serve", help=about, description=about)
    source = serve.add_mutually_exclusive_group(required=True)
    source.add_argument("--spec", type=Path, help="a spec, compiled as the server starts")
    add_package_options(source, serve)
    _add_db(serve, "the SQLite file served")
    serve.add_argument("--endpoint-url", help="serve a DynamoDB table at this endpoint instead")
    serve.add_argument("--region", help="DynamoDB's region (default: AWS_REGION or the config)")
    serve.add_argument("--table-name", help="the table's name when not the spec's")
    serve.add_argument("--host", default="127.0.0.1", help="default 127.0.0.1")
    serve.add_argument("--port", type=int, default=8000, help="default 8000")
    variables = {name: variable for variable, name in SCALE_VARIABLES.items()}
    serve.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="worker processes serving the port, each with its share of a tenant's budget "
        f"unless --redis-url (default {variables['workers']}, else 1)",
    )
    serve.add_argument(
        "--redis-url",
        metavar="URL",
        help="share tenants' budgets through this Redis (or Valkey) with every worker and "
        "host, each worker's own share while it cannot be reached, and one reader of the "
        "change stream elected among them all (default "
        f"{variables['redis_url']}; needs the redis extra)",
    )
    unset = SubscriptionSettings()
    for name, about in SUBSCRIPTION_FLAGS.items():
        serve.add_argument(
            f"--{name.replace('_', '-')}",
            type=int,
            metavar="N",
            help=f"{about} (default {SUBSCRIPTION_FIELDS[name]}, else {getattr(unset, name)})",
        )
    serve.add_argument(
        "--dev",
        action="store_true",
        help="development mode: GraphiQL's page holds a token, and answers report their "
        f"store calls and waves in extensions (always so without {SECRET_ENV})",
    )
    serve.add_argument(
        "--dev-role",
        action="append",
        metavar="ROLE",
        help="a role of GraphiQL's development token, whose URL and token are printed at "
        "start (repeat for several; without it, the token holds none: the default roles)",
    )
    serve.add_argument("--no-graphiql", action="store_true", help="serve no GraphiQL page")
    serve.add_argument(
        "--tenant-budget",
        type=int,
        default=CAPACITY,
        help=f"cost points a tenant's bucket holds (default {CAPACITY}, at least {MAX_COST})",
    )
    serve.add_argument(
        "--tenant-refill",
        type=float,
        default=REFILL_PER_SECOND,
        help=f"points a bucket regains a second (default {REFILL_PER_SECOND:g})",
    )
    serve.add_argument(
        "--trusted-documents",
        type=Path,
        metavar="FILE",
        help="run only this manifest's documents (Apollo's persisted-query manifest, or a "
        "{sha256: text} object); without it, clients may register documents by hash",
    )
    serve.add_argument(
        "--metrics-token",
        default=os.environ.get(METRICS_TOKEN_ENV),
        help=f"serve Prometheus metrics at /metrics to bearers of this token (at least "
        f"{MIN_METRICS_TOKEN} characters; default {METRICS_TOKEN_ENV})",
    )
    serve.add_argument(
        "--metrics-port", type=int, help="serve /metrics without a token on this port"
    )
    serve.add_argument(
        "--metrics-host", default="127.0.0.1", help="the metrics port's address (127.0.0.1)"
    )
    about = f"print a development token signed with {SECRET_ENV}"
    token = commands.add_parser("token", help=about, description=about)
    token.add_argument("--tenant", required=True)
    token.add_argument("--sub", help="the caller's subject (what owner rules compare)")
    token.add_argument("--role", action="append", help="a role (repeat for several)")
    token.add_argument("--ttl", type=int, default=86400, help="seconds it is valid (a day)")
    _add_db(token, f"without {SECRET_ENV}, sign with the development secret beside this file")


def _add_db(parser: argparse.ArgumentParser, about: str) -> None:
    """The --db argument, `about` saying what the file is to the command."""
    parser.add_argument(
        "--db", type=Path, default=DEFAULT_DB, help=f"{about} (default {DEFAULT_DB})"
    )


def _secret(db: Path) -> tuple[str, bool]:
    """The secret tokens are signed with, and whether it is the development one (kept beside
    `db`, made when first needed) for want of KEYGRAPH_JWT_SECRET."""
    from keygraph.tokens import dev_secret

    secret = os.environ.get(SECRET_ENV)
    if secret is None:
        return dev_secret(db.parent), True
    if len(secret) < MIN_SECRET:
        raise ValueError(f"set {SECRET_ENV} to a secret of at least {MIN_SECRET} characters")
    return secret, False


def token(args: argparse.Namespace) -> int:
    from keygraph.tokens import issue

    try:
        print(issue(_secret(args.db)[0], args.tenant, args.sub, args.ttl, args.role))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    return 0


def schema(args: argparse.Namespace, package: str) -> int:
    """Prints the schema that `serve --package` serves with the same `--extend`s."""
    from graphql import print_schema

    from .package import extension_at, schema_of

    try:
        extensions = [extension_at(place, package) for place in args.extend]
        printed = print_schema(schema_of(package, extensions))
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ImportError as exc:
        print(f"error: {package} has no API ({exc}); generate it again", file=sys.stderr)
        return EXIT_BAD_INPUT
    sys.stdout.write(printed + "\n")
    return 0


def serve(args: argparse.Namespace, package: str) -> int:
    """Serves the imported `package` until stopped (a stop signal drains it: 0)."""
    import functools

    from keygraph.tokens import DEV_TENANT, issue

    from . import request_log
    from .serving import Listening
    from .serving import serve as serve_served

    try:
        scale = _scale(args)
        app, secret, dev = _served(args, package, scale)
    except (ValueError, KeygraphError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except ImportError as exc:
        print(f"error: {package} has no API to serve ({exc}); generate it again", file=sys.stderr)
        return EXIT_BAD_INPUT
    url = f"http://{args.host}:{args.port}/graphql"
    request_log.configure()
    print(f"serving {package} on {url}", file=sys.stderr)
    if dev:
        print(f"no {SECRET_ENV}: tokens are signed with a development secret", file=sys.stderr)
    if args.dev_role:
        claim = app.tokens.roles_claim
        token = issue(secret, DEV_TENANT, "graphiql", roles=args.dev_role, roles_claim=claim)
        print(f"GraphiQL: {url}\ndev token (tenant {DEV_TENANT}): {token}", flush=True)
    listening = Listening(
        args.host,
        args.port,
        scale.workers,
        metrics_port=args.metrics_port,
        metrics_host=args.metrics_host,
    )
    serve_served(app, functools.partial(_worker_served, args, package, scale), listening)
    return 0


def _scale(args: argparse.Namespace) -> ScaleSettings:
    """The workers and Redis URL the flags ask for, else the environment's; ValueError when
    they cannot work."""
    values = scale_values(os.environ)
    for name in ("workers", "redis_url"):
        if getattr(args, name) is not None:
            values[name] = getattr(args, name)
    scale = ScaleSettings(**values)
    scale.check_scale()
    return scale


def _served(
    args: argparse.Namespace, package: str, scale: ScaleSettings
) -> tuple[Served, str, bool]:
    """What a process serves, with the secret tokens are signed with and whether it is the
    development one; ValueError, KeygraphError or ImportError when it cannot be served."""
    from keygraph.tokens import DEV_TENANT, issue

    from .package import extension_at, served, table_of
    from .worker_budget import worker_budget

    if args.tenant_budget < MAX_COST:
        raise ValueError(f"--tenant-budget must be at least the cost limit, {MAX_COST}")
    secret, dev = _secret(args.db)
    observed = _options(args)
    extensions = [extension_at(place, package) for place in args.extend]
    table = table_of(package, args.table_name)
    budget, closing = worker_budget(args.tenant_budget, args.tenant_refill, scale, table.name)
    store = _store(args, table)
    reader: dict[str, Any] = {}
    if scale.redis_url is not None:
        elected = _elected(store, table, scale.redis_url)
        reader = {"source": elected.source, "starting": (elected.start,)}
        closing = (elected.close, *closing)
    graphiql = not args.no_graphiql
    app = served(package, store, secret, extensions, budget=budget, graphiql=graphiql, **reader)
    app = replace(app, closing=closing, **observed)
    roles, claim = args.dev_role, app.tokens.roles_claim

    def dev_authorization() -> str:
        """A fresh token for each GraphiQL page, so a long-running server's never goes stale."""
        return f"Bearer {issue(secret, DEV_TENANT, 'graphiql', roles=roles, roles_claim=claim)}"

    if dev or args.dev or roles:
        app = replace(app, dev_authorization=dev_authorization, dev=dev or args.dev)
    return app, secret, dev


def _elected(store: Store, table: TableDef, url: str) -> Elected:
    """This worker's part in the one reader of the change stream for every host sharing
    Redis at `url`, as the environment's reader settings say; ValueError when they cannot
    work (redis-py is loaded only then)."""
    from .elected import Elected
    from .package import POLL_SECONDS
    from .reader_settings import reader_settings

    return Elected(store, table, url, reader_settings(), POLL_SECONDS)


def _worker_served(
    args: argparse.Namespace, package: str, scale: ScaleSettings, _beside: None
) -> Served:
    """What a worker process serves, built in it."""
    return _served(args, package, scale)[0]


def _options(args: argparse.Namespace) -> dict[str, Any]:
    """Served's options for the trusted documents and the metrics the arguments ask for,
    and the request deadline and traces the environment asks for; ValueError (a
    ManifestError) when they cannot be used."""
    from .manifest import load
    from .patterns import Patterns
    from .persisted import Documents
    from .request_settings import request_settings
    from .trace_provider import tracer_provider
    from .trace_settings import trace_settings

    options: dict[str, Any] = {"request_timeout": request_settings().request_timeout}
    flags = {name: getattr(args, name) for name in SUBSCRIPTION_FIELDS}
    options["subscriptions"] = subscription_settings(**flags)
    traces = trace_settings()
    if args.trusted_documents is not None:
        options["persisted"] = Documents(load(args.trusted_documents))
    token = args.metrics_token
    if token is not None and len(token) < MIN_METRICS_TOKEN:
        raise ValueError(f"a metrics token is at least {MIN_METRICS_TOKEN} characters")
    if args.metrics_port is not None and args.metrics_port == args.port:
        raise ValueError("--metrics-port must differ from --port")
    if token is not None or args.metrics_port is not None:
        options["metered"], options["metrics_token"] = True, token
    if traces.tracing:
        options["tracer_provider"] = tracer_provider(traces)
    if args.spec is not None and (options.get("metered") or traces.tracing):
        options["pattern_of"] = Patterns.load(args.spec).of_call
    return options


def _store(args: argparse.Namespace, table: TableDef) -> Store:
    if args.endpoint_url is None and args.region is None:
        from keygraph.stores.embedded.store import EmbeddedStore

        args.db.parent.mkdir(parents=True, exist_ok=True)
        return EmbeddedStore(table, path=args.db)
    from keygraph.stores.dynamodb.store import DynamoDBStore

    return DynamoDBStore(table, endpoint_url=args.endpoint_url, region=args.region)

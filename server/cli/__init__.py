"""`python -m server`: serve, seed, token, table, backfill-groups, schema and documents
commands."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import sys
from collections.abc import Sequence
from typing import Any

from server.cli import documents, table
from server.settings import STORE_KINDS, Settings, SettingsError, load_settings


def _store_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--store", choices=STORE_KINDS, help="default: embedded")
    parser.add_argument("--data", help="data directory (default ./.keygraph)")


def _settings(args: argparse.Namespace, **extra: Any) -> Settings:
    return load_settings(
        store=getattr(args, "store", None), data_dir=getattr(args, "data", None), **extra
    )


_SIZE_FLAGS = ("users", "orders", "groups", "org_nodes", "org_depth", "shops", "max_members")


def _seed_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--tenant", help="default: the dev tenant (demo)")
    for name in _SIZE_FLAGS:
        flag = "--" + name.replace("_", "-")
        parser.add_argument(flag, type=int, help="default: the demo size")
    parser.add_argument("--rng-seed", type=int, default=0)
    parser.add_argument("--no-progress", action="store_true")


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(prog="python -m server", description=__doc__)
    commands = root.add_subparsers(dest="command", required=True)

    serve = commands.add_parser(
        "serve",
        help="serve the GraphQL API the spec compiles to, with server.extension",
        description="Serve the GraphQL API the spec compiles to with this repository's "
        "extension, as `keygraph serve --package generated --extend server.extension` does, "
        "configured by the KEYGRAPH_* settings. SIGTERM or SIGINT (Ctrl-C) stop taking "
        "connections, let requests in flight finish, then exit; a DynamoDB Local started "
        "here stops with the server, even one killed.",
    )
    serve.add_argument("--host", help="default 127.0.0.1 (KEYGRAPH_HOST)")
    serve.add_argument("--port", type=int, help="default 8000 (KEYGRAPH_PORT)")
    serve.add_argument(
        "--workers",
        type=int,
        help="worker processes sharing the port (default 1, KEYGRAPH_WORKERS); each takes "
        "its share of a tenant's budget",
    )
    _store_options(serve)
    serve.add_argument("--demo", action="store_true", help="seed the demo tenant once first")

    seed = commands.add_parser("seed", help="write a generated dataset into a tenant (once)")
    _store_options(seed)
    _seed_options(seed)

    token = commands.add_parser(
        "token",
        help="print a JWT (HS256) for a tenant, signed with KEYGRAPH_JWT_SECRET or, when none "
        "is set, the dev secret of the data directory",
    )
    token.add_argument("--tenant", required=True)
    token.add_argument("--sub")
    token.add_argument(
        "--role",
        action="append",
        dest="roles",
        help="a role of the caller (repeatable; none given: the server's default roles)",
    )
    token.add_argument("--ttl", type=int, default=86400, help="seconds (default a day)")
    token.add_argument("--data", help="data directory (default ./.keygraph)")

    table.add_parser(commands, _store_options)

    backfill = commands.add_parser(
        "backfill-groups",
        help="give users stored before they kept their group ids those ids",
        description="Give every user stored before users kept their group ids (on the user "
        "item, written with each membership) the ids of its memberships. Such users read "
        "their groups with a Query of their memberships until then; run it once after "
        "upgrading, while the server serves. Each write is conditional on the user being "
        "unchanged since read; a run writes nothing for users already done, so a stopped "
        "run is continued by running it again.",
    )
    _store_options(backfill)
    backfill.add_argument("--tenant", help="only this tenant's users (default: every user)")
    backfill.add_argument("--no-progress", action="store_true")

    commands.add_parser(
        "schema",
        help="print the GraphQL schema served (SDL): the spec's API with server.extension, "
        "as `keygraph schema --package generated --extend server.extension` prints it",
    )
    documents.add_parser(commands)
    return root


def _sizes(args: argparse.Namespace) -> Any:
    """The demo sizes, with every size given as a flag in its place."""
    from server.seed.tenant import SeedSizes

    given = {name: getattr(args, name) for name in _SIZE_FLAGS if getattr(args, name) is not None}
    return dataclasses.replace(SeedSizes.demo(), **given)


def cmd_serve(args: argparse.Namespace) -> int:
    from keygraph.serve import request_log as json_logging
    from server.compiled import dev_token
    from server.seed.tenant import SeedSizes, seed
    from server.serving.backends import open_backend
    from server.serving.memory import tune_malloc
    from server.serving.serve import serve

    settings = _settings(args, host=args.host, port=args.port, workers=args.workers)
    tune_malloc()
    json_logging.configure()
    with open_backend(settings) as backend:
        if args.demo:
            report = asyncio.run(seed(backend.store, settings.dev_tenant, SeedSizes.demo()))
            state = "already seeded" if report.already_seeded else f"{report.total} items"
            print(f"demo tenant {settings.dev_tenant!r}: {state}", file=sys.stderr)
        if settings.dev and settings.jwt_secret is not None:
            url = f"http://{settings.host}:{settings.port}/graphql"
            token = dev_token(settings)
            print(f"GraphiQL: {url}\ndev token (tenant {settings.dev_tenant}): {token}")
            sys.stdout.flush()
        serve(settings, backend.store, backend.local_endpoint)
    return 0


def cmd_seed(args: argparse.Namespace) -> int:
    from server.seed.tenant import seed
    from server.serving.backends import open_backend

    settings = _settings(args)
    sizes = _sizes(args)
    tenant = args.tenant or settings.dev_tenant

    async def run() -> Any:
        try:
            return await seed(backend.store, tenant, sizes, args.rng_seed, not args.no_progress)
        finally:
            await backend.store.close()

    with open_backend(settings) as backend:
        report = asyncio.run(run())
    if report.already_seeded:
        print(f"tenant {tenant!r} already holds dataset {report.tag}; nothing written")
    else:
        print(f"tenant {tenant!r}: wrote {report.total} items in {report.seconds:.1f} s")
    return 0


def cmd_backfill_groups(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    from keygraph.cursor import CursorCodec
    from keygraph.store import Session
    from server.domain.backfill import backfill_group_ids
    from server.serving.backends import open_backend

    settings = _settings(args)
    with open_backend(settings) as backend:
        session = Session(store=backend.store, cursors=CursorCodec(settings.cursor_key()))
        bar = tqdm(unit=" items", desc="backfill", disable=args.no_progress, file=sys.stderr)

        async def run() -> Any:
            try:
                return await backfill_group_ids(session, args.tenant, bar.update)
            finally:
                bar.close()
                await backend.store.close()

        report = asyncio.run(run())
    print(report)
    return 0


def cmd_token(args: argparse.Namespace) -> int:
    from server.auth.tokens import issue_token

    print(issue_token(_settings(args), args.tenant, args.sub, args.ttl, args.roles))
    return 0


def cmd_table(args: argparse.Namespace) -> int:
    return table.run(args, _settings(args))


def cmd_schema(_args: argparse.Namespace) -> int:
    from graphql import print_schema

    from keygraph.serve.package import extension_at, schema_of

    extension = extension_at("server.extension", "generated")
    sys.stdout.write(print_schema(schema_of("generated", [extension])) + "\n")
    return 0


def cmd_documents(args: argparse.Namespace) -> int:
    return documents.run(args)


COMMANDS = {
    "serve": cmd_serve,
    "seed": cmd_seed,
    "token": cmd_token,
    "table": cmd_table,
    "backfill-groups": cmd_backfill_groups,
    "schema": cmd_schema,
    "documents": cmd_documents,
}


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        return COMMANDS[args.command](args)
    except (SettingsError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

"""The runtime's command line, `python -m keygraph table ...`: keep a live table in step
with a generated package, on the embedded store or DynamoDB. The `keygraph` command is
this `table` with the compiler's generate, check and lint (codegen/cli.py): the runtime
does not import the compiler."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence
from pathlib import Path

from keygraph.errors import KeygraphError
from keygraph.migrate.target import Target, load_target
from keygraph.store import Store

from . import table

DEFAULT_EMBEDDED = Path(".keygraph") / "keygraph.sqlite3"


def add_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """The `table` command and its options, added to a command line's `commands`."""
    parser = commands.add_parser(
        "table",
        help="create, describe, plan or migrate the table of a generated package",
        description=table.DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("action", choices=table.ACTIONS)
    parser.add_argument(
        "--package",
        default="generated",
        help="the generated package: its directory, or its import name from the current "
        "directory or the installed packages (default: generated)",
    )
    parser.add_argument(
        "--store", choices=("embedded", "dynamodb"), default="embedded", help="default: embedded"
    )
    parser.add_argument(
        "--path",
        type=Path,
        default=DEFAULT_EMBEDDED,
        help=f"embedded: the SQLite file (default {DEFAULT_EMBEDDED})",
    )
    parser.add_argument(
        "--endpoint-url",
        help="dynamodb: the endpoint (default: the region's; a localhost URL, such as "
        "DynamoDB Local's, needs no AWS configuration)",
    )
    parser.add_argument(
        "--region", help="dynamodb: the AWS region (default: AWS_REGION or the AWS config)"
    )
    parser.add_argument("--table-name", help="the table's name when not the spec's")
    table.add_options(parser)


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(
        prog="python -m keygraph",
        description="Keep a table in step with a generated package (`keygraph table`; the "
        "`keygraph` command also compiles specs).",
    )
    commands = root.add_subparsers(dest="command", required=True)
    add_parser(commands)
    return root


def importable(package: str) -> str:
    """The import name of the generated package named by `package` (a directory or an
    import name), made importable from where it lies: a console script has no current
    directory on sys.path."""
    directory = Path(package)
    if directory.is_dir():
        directory = directory.resolve()
        sys.path.insert(0, str(directory.parent))
        package = directory.name
    else:
        sys.path.insert(0, str(Path.cwd()))
    importlib.invalidate_caches()
    return package


def _target(package: str, table_name: str | None) -> Target:
    return load_target(importable(package), table_name)


def _store(args: argparse.Namespace, target: Target) -> Store:
    if args.store == "embedded":
        from keygraph.stores.embedded.store import EmbeddedStore

        return EmbeddedStore(target.table, path=args.path)
    from keygraph.stores.dynamodb.store import DynamoDBStore

    return DynamoDBStore(target.table, endpoint_url=args.endpoint_url, region=args.region)


def run(args: argparse.Namespace) -> int:
    """The `table` command, as `add_parser`'s options gave it."""
    try:
        target = _target(args.package, args.table_name)
    except ImportError as exc:
        print(
            f"error: cannot import the generated package {args.package!r}: {exc}. Pass "
            "--package with its directory (the --out of `keygraph generate`).",
            file=sys.stderr,
        )
        return table.EXIT_BAD_INPUT
    try:
        store = _store(args, target)
    except KeygraphError as exc:
        print(f"error: {exc} (as options: --region, --endpoint-url)", file=sys.stderr)
        return table.EXIT_BAD_INPUT
    return table.execute(args, store, target)


def main(argv: Sequence[str] | None = None) -> int:
    return run(parser().parse_args(argv))

"""The `keygraph` command (also `python -m keygraph`): compile a spec into a package
(generate, check, lint) and keep a live table in step with a generated package (table),
on the embedded store or DynamoDB."""

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

_DESCRIPTION = """\
Compile an access-pattern spec into a typed Python package, and keep a table in step
with it.

  generate  lint the spec, then write the package to --out
  check     exit 1 with a unified diff when --out differs from what the spec gives
  lint      only check the spec
  schema    print the GraphQL API the spec gives (SDL)
  table     create, describe, plan or migrate the table of a generated package

`keygraph <command> --help` says more.
"""
DEFAULT_EMBEDDED = Path(".keygraph") / "keygraph.sqlite3"


def _codegen_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    helps = {
        "generate": "lint the spec, then write the generated package (files the spec no "
        "longer produces are removed)",
        "check": "exit 1 and print a unified diff when the package is not what the spec gives",
        "lint": "only check the spec: its shape, its references and the key design",
        "schema": "print the GraphQL API the spec gives: a type per entity, a field per pattern",
    }
    for name, help_text in helps.items():
        command = commands.add_parser(name, help=help_text, description=help_text)
        command.add_argument(
            "--spec", type=Path, default=Path("access_patterns.toml"), help="the spec file"
        )
        command.add_argument(
            "--out",
            type=Path,
            default=Path("generated"),
            help="the generated package's directory (its name is the package's import name)",
        )


def _table_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
        prog="keygraph",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = root.add_subparsers(dest="command", required=True)
    _codegen_parser(commands)
    _table_parser(commands)
    return root


def _target(package: str, table_name: str | None) -> Target:
    """The generated package named by `package` (a directory or an import name), importable
    from where it lies: a console script has no current directory on sys.path."""
    directory = Path(package)
    if directory.is_dir():
        directory = directory.resolve()
        sys.path.insert(0, str(directory.parent))
        package = directory.name
    else:
        sys.path.insert(0, str(Path.cwd()))
    importlib.invalidate_caches()
    return load_target(package, table_name)


def _store(args: argparse.Namespace, target: Target) -> Store:
    if args.store == "embedded":
        from keygraph.stores.embedded.store import EmbeddedStore

        return EmbeddedStore(target.table, path=args.path)
    from keygraph.stores.dynamodb.store import DynamoDBStore

    return DynamoDBStore(target.table, endpoint_url=args.endpoint_url, region=args.region)


def _table(args: argparse.Namespace) -> int:
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
    args = parser().parse_args(argv)
    if args.command == "table":
        return _table(args)
    from codegen.cli import run

    return run(args.command, args.spec, args.out)

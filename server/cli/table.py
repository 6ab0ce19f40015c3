"""`python -m server table create | describe | plan | migrate`: keygraph's table command
(keygraph/cli/table.py) on the store the server's settings name, for its generated
package by default."""

from __future__ import annotations

import argparse
from typing import Any

from keygraph.cli import table
from keygraph.migrate.target import load_target


def add_parser(commands: Any, store_options: Any) -> None:
    parser = commands.add_parser(
        "table",
        help="create, describe, plan or migrate the table",
        description=table.DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("action", choices=table.ACTIONS)
    store_options(parser)
    parser.add_argument(
        "--package", default="generated", help="the generated package of the spec (generated)"
    )
    table.add_options(parser)


def run(args: argparse.Namespace, settings: Any) -> int:
    from server.serving.backends import open_backend

    target = load_target(args.package, settings.table)
    with open_backend(settings, target.table) as backend:
        return table.execute(args, backend.store, target)

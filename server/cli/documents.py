"""`python -m server documents check | make`: trusted-documents manifests, checked against
the schema `serve` answers with (keygraph/serve/manifest.py; served with
KEYGRAPH_TRUSTED_DOCUMENTS)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import orjson
from graphql import GraphQLError, GraphQLSchema, OperationDefinitionNode, parse, validate

from keygraph.serve import manifest

EXIT_INVALID = 1
EXIT_BAD_INPUT = 2

DESCRIPTION = """\
Trusted documents: the only operations a server started with KEYGRAPH_TRUSTED_DOCUMENTS
runs.

  check MANIFEST    read a manifest (Apollo's persisted-query manifest, or a {sha256: text}
                    object) and validate each document against the schema
  make FILE...      print an Apollo persisted-query manifest of .graphql files, one
                    operation each (with the fragments it uses), validated; --output to write
                    it to a file

Exit status: 0 valid, 1 a document does not validate against the schema, 2 a file that
cannot be read or is no manifest.
"""


def add_parser(commands: Any) -> None:
    documents = commands.add_parser(
        "documents",
        help="check or make a trusted-documents manifest",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = documents.add_subparsers(dest="action", required=True)
    check = actions.add_parser("check", help="validate a manifest against the schema")
    check.add_argument("manifest", type=Path)
    make = actions.add_parser("make", help="a manifest of .graphql files")
    make.add_argument("files", type=Path, nargs="+")
    make.add_argument("--output", type=Path, help="write here (default: standard output)")


def _schema() -> GraphQLSchema:
    """The compiled API `serve` answers with (server/compiled.py)."""
    from keygraph.serve.package import extension_at, schema_of
    from server.compiled import EXTENSION, PACKAGE

    return schema_of(PACKAGE, [extension_at(EXTENSION, PACKAGE)])


def _problems(schema: GraphQLSchema, text: str) -> list[str]:
    """Why `text` cannot run on `schema` (empty when it can)."""
    try:
        document = parse(text)
    except GraphQLError as error:
        return [error.message]
    return [error.message for error in validate(schema, document)]


def _operation(text: str, where: str) -> tuple[str | None, str]:
    """The name and type of the one operation in `text`; ValueError when it has not one."""
    try:
        document = parse(text)
    except GraphQLError as error:
        raise ValueError(f"{where}: {error.message}") from error
    operations = [d for d in document.definitions if isinstance(d, OperationDefinitionNode)]
    if len(operations) != 1:
        raise ValueError(f"{where}: a file must hold one operation, not {len(operations)}")
    operation = operations[0]
    return (operation.name.value if operation.name else None), operation.operation.value


def run(args: argparse.Namespace) -> int:
    schema = _schema()
    if args.action == "check":
        try:
            documents = manifest.load(args.manifest)
        except manifest.ManifestError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
        texts = list(documents.items())
    else:
        try:
            texts = [(str(path), path.read_text()) for path in args.files]
            operations = [(*_operation(text, where), text) for where, text in texts]
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return EXIT_BAD_INPUT
    invalid = 0
    for where, text in texts:
        for problem in _problems(schema, text):
            invalid += 1
            print(f"{where}: {problem}", file=sys.stderr)
    if invalid:
        return EXIT_INVALID
    if args.action == "check":
        print(f"{args.manifest}: {len(texts)} documents, all valid")
        return 0
    output = orjson.dumps(manifest.apollo_manifest(operations), option=orjson.OPT_INDENT_2)
    if args.output is None:
        sys.stdout.write(output.decode() + "\n")
    else:
        args.output.write_bytes(output + b"\n")
    return 0

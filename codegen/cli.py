"""The `keygraph` command (also `python -m codegen`): compile a spec into a package
(generate, check, lint, schema), keep a live table in step with a generated package (table,
the runtime's command: keygraph.cli), and serve a package's API (serve, token: the
runtime's keygraph.serve)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

from keygraph import cli as runtime_cli
from keygraph.serve import cli as serve_cli

from . import output, pipeline
from .diagnostics import SpecErrors
from .formatter import FormatError

_DESCRIPTION = """\
Compile an access-pattern spec (TOML) into a typed Python package, and keep a table in step
with it.

  generate  lint the spec, then write the package to --out (files the spec no longer
            produces are removed)
  check     exit 1 and print a unified diff when --out differs from what the spec gives
            (also for a file the spec no longer produces); exit 0 when up to date
  lint      only check the spec: its shape, its references and the key design (patterns
            served by a key or index, no colliding or overlapping keys, prefixes ending at
            a delimiter, keys that sort as strings, projections holding what is returned)
  schema    print the GraphQL API the spec gives (the package's api.graphql): an object
            type per entity a pattern returns, a root field per pattern; with --package
            and --extend, the API served with those extensions
  serve     serve a spec's (or a generated package's) API over HTTP on a SQLite file or
            DynamoDB; callers send a token signed with KEYGRAPH_JWT_SECRET
  token     print a development token for it
  table     create, describe, plan or migrate the table of a generated package

Every problem of a spec is reported at once as <spec>:<line>: <toml path>: <what and how to
fix>, followed, where one edit keeps the spec's meaning, by "fix:" and that edit as TOML
lines; the exit status is 1. docs/spec.md, "Lint", lists the findings.
`keygraph <command> --help` says more.
"""
_HELPS = {
    "generate": "lint the spec, then write the generated package (files the spec no longer "
    "produces are removed)",
    "check": "exit 1 and print a unified diff when the package is not what the spec gives",
    "lint": "only check the spec: its shape, its references and the key design",
    "schema": "print the GraphQL API the spec gives: a type per entity, a field per pattern",
}


def parser() -> argparse.ArgumentParser:
    root = argparse.ArgumentParser(
        prog="keygraph",
        description=_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    commands = root.add_subparsers(dest="command", required=True)
    for name, help_text in _HELPS.items():
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
    served = commands.choices["schema"].add_argument_group(
        "the schema served", "with --package: the API `keygraph serve` serves, extensions and all"
    )
    serve_cli.add_package_options(served, served)
    runtime_cli.add_parser(commands)
    serve_cli.add_parsers(commands)
    return root


def run(command: str, spec: Path, out: Path) -> int:
    try:
        text = spec.read_text(encoding="utf-8")
    except OSError as exc:
        print(f"{spec}: cannot read the spec: {exc.strerror}", file=sys.stderr)
        return 1
    try:
        if command == "lint":
            pipeline.analyse(text, spec.name)
            print(f"{spec}: ok")
            return 0
        files = pipeline.generate(text, spec.name, out.resolve().name)
    except SpecErrors as exc:
        for problem in exc.problems:
            print(problem.render(str(spec)), file=sys.stderr)
        print(f"{len(exc.problems)} problem(s); nothing written", file=sys.stderr)
        return 1
    except FormatError as exc:
        print(f"formatting the generated code failed: {exc}", file=sys.stderr)
        return 1
    if command == "schema":
        sdl = files.get("api.graphql")
        if sdl is None:
            print(f"{spec}: names no access pattern, so it gives no API", file=sys.stderr)
            return 1
        sys.stdout.write(sdl)
        return 0
    if command == "check":
        difference = output.diff(files, out)
        if difference:
            sys.stdout.write(difference)
            print(
                f"{out} is out of date: generate it again (keygraph generate, with the same "
                "--spec and --out)",
                file=sys.stderr,
            )
            return 1
        print(f"{out}: up to date ({len(files)} files)")
        return 0
    try:
        touched = output.write(files, out)
    except OSError as exc:
        print(f"{out}: cannot write the generated files: {exc}", file=sys.stderr)
        return 1
    print(f"{out}: {len(files)} files, {len(touched)} changed")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.command == "schema" and (args.package or args.extend):
        if not args.package:
            print("error: --extend extends a package: name it with --package", file=sys.stderr)
            return 2
        return serve_cli.schema(args, runtime_cli.importable(args.package))
    if args.command == "table":
        return runtime_cli.run(args)
    if args.command == "token":
        return serve_cli.token(args)
    if args.command == "serve":
        package = _compiled(args.spec) if args.spec else runtime_cli.importable(args.package)
        return 1 if package is None else serve_cli.serve(args, package)
    return run(args.command, args.spec, args.out)


SERVED = Path(".keygraph") / "served"
"""Where `serve --spec` writes the package it compiles (one directory per spec)."""


def _compiled(spec: Path) -> str | None:
    """The import name of the package compiled from `spec` for serving (under SERVED);
    None, with every problem printed, when it does not compile."""
    words = [spec.resolve().parent.name, spec.stem] if spec.stem == "spec" else [spec.stem]
    name = "served_" + "".join(c if c.isalnum() else "_" for c in "_".join(words).lower())
    status = run("generate", spec, SERVED / name)
    return None if status else runtime_cli.importable(str(SERVED / name))

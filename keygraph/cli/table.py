"""The table command (`keygraph table`, `python -m server table`): create, describe, plan
or migrate the live table against the spec of a generated package, on a store the caller
opened."""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import json
import sys
from pathlib import Path

from tqdm import tqdm

from keygraph.errors import StoreUnavailable, ValidationError
from keygraph.migrate.plan import Plan, make_plan
from keygraph.migrate.run import Checkpoint, item_count, migrate
from keygraph.migrate.target import Target
from keygraph.store import Store
from keygraph.stores import admin_of

EXIT_REFUSED = 1
EXIT_BAD_INPUT = 2
EXIT_UNAVAILABLE = 3

DESCRIPTION = """\
Keep the live table in step with the spec.

  create    create the table (DynamoDB) with every index, TTL, backups and stream; the
            embedded store creates its file when opened
  describe  the live table as JSON: key schema, indexes and their status, TTL, backups,
            stream
  plan      compare the live table and its items with the spec and print the steps that
            would bring them there (reads every item of the scope, writes nothing); exit 1
            when a change cannot be made online, with the procedure that makes it
  migrate   plan, then carry the plan out, online: create indexes (waiting until ACTIVE),
            backfill items whose keys the spec now computes differently (each update
            conditional on the item being unchanged since read), delete indexes only with
            --allow-destructive. Progress is checkpointed in the table: a migration stopped
            any way continues where it stopped when run again, from any machine; run again
            when done, it writes nothing.

Exit status: 0 done (or nothing to do), 1 refused (nothing written), 2 bad input (a saved
plan for another table or spec), 3 the store became unavailable (rerun to continue).
"""


ACTIONS = ("create", "describe", "plan", "migrate")


def add_options(table: argparse.ArgumentParser) -> None:
    """The command's options besides the action, the store and the package."""
    table.add_argument("--tenant", help="only this tenant's items (default: every item)")
    table.add_argument(
        "--allow-destructive",
        action="store_true",
        help="delete indexes the spec no longer has, and recreate changed ones",
    )
    table.add_argument("--out", type=Path, help="plan: also write the plan as JSON here")
    table.add_argument(
        "--plan",
        type=Path,
        help="migrate: carry out this saved plan, refusing if the table no longer matches it",
    )
    table.add_argument(
        "--max-writes-per-second", type=float, help="migrate: cap the backfill's write rate"
    )
    table.add_argument("--no-progress", action="store_true", help="migrate: no progress bar")


def _store_kind(store: Store) -> str:
    from keygraph.stores.embedded.store import EmbeddedStore

    return "embedded" if isinstance(store, EmbeddedStore) else "dynamodb"


async def _plan(args: argparse.Namespace, target: Target, store: Store) -> Plan:
    return await make_plan(
        target,
        store,
        admin_of(store),
        _store_kind(store),
        tenant=args.tenant,
        allow_destructive=args.allow_destructive,
        rate=args.max_writes_per_second,
    )


def _check_saved(path: Path, plan: Plan) -> str | None:
    """Why a saved plan does not fit the plan made now (None when it does)."""
    try:
        saved = json.loads(path.read_text())
    except (OSError, ValueError) as exc:
        return f"cannot read the plan {path}: {exc}"
    for name, now in (
        ("table", plan.table),
        ("fingerprint", plan.fingerprint),
        ("tenant", plan.tenant),
    ):
        if saved.get(name) != now:
            return (
                f"the plan {path} is for {name} {saved.get(name)!r}, this table and spec give "
                f"{now!r}: plan again"
            )
    if saved.get("identity") != plan.identity():
        return f"the table changed since the plan {path} was made: plan again"
    return None


async def _migrate(args: argparse.Namespace, target: Target, store: Store) -> int:
    admin = admin_of(store)
    plan = await _plan(args, target, store)
    print(plan.render())
    if plan.refused:
        print("refused: nothing written", file=sys.stderr)
        return EXIT_REFUSED
    if args.plan is not None:
        problem = _check_saved(args.plan, plan)
        if problem is not None:
            print(f"error: {problem}", file=sys.stderr)
            return EXIT_BAD_INPUT
    state = await Checkpoint(store, target, args.tenant).load()
    resumed = 0 if state.get("done") else int(state.get("scanned", 0))
    total = item_count(admin, target, args.tenant)
    bar = tqdm(
        total=total,
        initial=resumed,
        unit=" items",
        desc="backfill",
        disable=args.no_progress,
        file=sys.stderr,
    )

    def progress(scanned: int, updated: int) -> None:
        bar.update(scanned - bar.n)
        bar.set_postfix(updated=updated, refresh=False)

    try:
        report = await migrate(
            plan, target, store, admin, args.max_writes_per_second, progress=progress
        )
    finally:
        bar.close()
    print("migrated:\n" + report.render())
    return 0


async def _run(args: argparse.Namespace, store: Store, target: Target) -> int:
    admin = admin_of(store)
    if args.action == "create":
        if admin.describe() is not None:
            print(f"table {target.table.name} exists")
        else:
            admin.create_table()
            print(f"created table {target.table.name}")
        return 0
    if args.action == "describe":
        live = admin.describe()
        print(json.dumps(None if live is None else dataclasses.asdict(live), indent=2))
        return 0
    if args.action == "plan":
        plan = await _plan(args, target, store)
        print(plan.render())
        if args.out is not None:
            args.out.write_text(
                json.dumps({**plan.to_json(), "identity": plan.identity()}, indent=2)
            )
        return EXIT_REFUSED if plan.refused else 0
    return await _migrate(args, target, store)


def execute(args: argparse.Namespace, store: Store, target: Target) -> int:
    """Run the command on `store` (closed when done); the exit status."""

    async def main() -> int:
        try:
            return await _run(args, store, target)
        finally:
            await store.close()

    try:
        return asyncio.run(main())
    except StoreUnavailable as exc:
        print(
            f"error: the store became unavailable: {exc}. Nothing is half-written (each "
            "item is one conditional update); the checkpoint in the table keeps the "
            "progress: run again to continue.",
            file=sys.stderr,
        )
        return EXIT_UNAVAILABLE
    except ValidationError as exc:
        print(f"error: the store refused: {exc}", file=sys.stderr)
        return EXIT_REFUSED

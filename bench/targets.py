"""The servers the benchmark compares, built the same way in-process and in a server process:
keygraph (the compiled API `python -m server serve` serves: `keygraph serve` over generated
and server/extension, compiled execution), the same API on graphql-core's executor, and the
floor."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any, Literal

from starlette.applications import Starlette
from starlette.types import ASGIApp

from bench.floor import floor_app as floor_asgi
from bench.floor_data import Item, load_floor_data
from generated.table import TABLE
from keygraph.serve import create_app
from keygraph.store import Store
from keygraph.stores.dynamodb.admin import create_table
from keygraph.stores.dynamodb.local import LOCAL_KEY_ID, LOCAL_REGION, LOCAL_SECRET
from keygraph.stores.dynamodb.store import DynamoDBStore, make_client
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.compiled import compiled
from server.settings import Limits, Settings, load_settings

StoreName = Literal["embedded", "dynamodb-local"]
Executor = Literal["compiled", "graphql-core"]
EXECUTORS: tuple[Executor, ...] = ("compiled", "graphql-core")
Variant = Literal["keygraph", "graphql-core", "floor"]
VARIANTS: tuple[Variant, ...] = ("keygraph", "graphql-core", "floor")

JWT_SECRET = "keygraph-benchmark-secret-not-for-production-use"


BENCH_LIMITS = Limits(tenant_budget=10**12, tenant_refill=10**12)
"""The default limits, but a budget no run can exhaust: the benchmark measures throughput,
and one tenant sends every request."""


def bench_settings(data_dir: Path, store: StoreName, endpoint: str | None) -> Settings:
    """Dev settings (so answers carry storeCalls/storeWaves) with a fixed secret and no
    environment: the benchmark never depends on the caller's KEYGRAPH_* variables."""
    return load_settings(
        environ={},
        env="dev",
        data_dir=data_dir,
        store=store,
        dynamodb_endpoint=endpoint,
        region=LOCAL_REGION,
        jwt_secret=JWT_SECRET,
        graphiql=False,
        limits=BENCH_LIMITS,
    )


def production_settings(data_dir: Path) -> Settings:
    """Production settings with a fixed secret and no budget to run out: what the in-process
    benches that read CPU per request serve with."""
    return Settings(
        data_dir=data_dir, jwt_secret="b" * 40, env="production", limits=BENCH_LIMITS
    ).resolved()


def auth_headers(settings: Settings, tenant: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {issue_token(settings, tenant, 'bench', roles=['admin'])}"}


def local_client(endpoint: str, read_timeout: float = 10.0) -> Any:
    """A boto3 client for DynamoDB Local; bulk loads pass a longer read timeout, as a busy
    machine can hold a batch write up for seconds."""
    return make_client(
        endpoint,
        LOCAL_REGION,
        access_key_id=LOCAL_KEY_ID,
        secret_access_key=LOCAL_SECRET,
        read_timeout=read_timeout,
    )


def dynamodb_local_store(endpoint: str) -> DynamoDBStore:
    return DynamoDBStore(
        TABLE,
        endpoint_url=endpoint,
        region=LOCAL_REGION,
        access_key_id=LOCAL_KEY_ID,
        secret_access_key=LOCAL_SECRET,
    )


def create_local_table(endpoint: str) -> None:
    """The table as codegen defines it, on DynamoDB Local."""
    client = local_client(endpoint, read_timeout=120.0)
    try:
        create_table(client, TABLE)
    finally:
        client.close()


def open_store(settings: Settings) -> Store:
    if settings.store == "embedded":
        return EmbeddedStore(TABLE, path=settings.embedded_path)
    if settings.dynamodb_endpoint is None:
        raise ValueError("DynamoDB Local needs its endpoint")
    return dynamodb_local_store(settings.dynamodb_endpoint)


def compiled_app(
    settings: Settings, store: Store, executor: Executor = "compiled", **options: Any
) -> Starlette:
    """The compiled API on `store` as `python -m server serve` builds it from `settings`
    (server/compiled.py), run on `executor`, with `options` of keygraph serve's Served
    replaced."""
    served = replace(compiled(settings, store), compiled=executor == "compiled", **options)
    return create_app(served)


def keygraph_app(settings: Settings, store: Store, variant: Variant) -> ASGIApp:
    """keygraph's own app as `variant` runs it (not the floor)."""
    return compiled_app(settings, store, "compiled" if variant == "keygraph" else "graphql-core")


def floor_app(items: Iterable[Item], tenant: str) -> ASGIApp:
    return floor_asgi(load_floor_data(items, tenant))

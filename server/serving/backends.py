"""Opening the configured store: the embedded SQLite file, DynamoDB at an endpoint (AWS by
default), or a DynamoDB Local process started and stopped around the caller."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from generated.table import TABLE
from keygraph.plan import TableDef
from keygraph.store import Store
from keygraph.stores.dynamodb import admin
from keygraph.stores.dynamodb.local import LOCAL_KEY_ID, LOCAL_REGION, LOCAL_SECRET, DynamoDBLocal
from keygraph.stores.dynamodb.store import DynamoDBStore, make_client
from keygraph.stores.embedded.store import EmbeddedStore
from server.settings import Settings, SettingsError

LOCAL_READ_TIMEOUT = 60.0
"""DynamoDB Local answers slowly on a busy machine (CreateTable, transactions)."""


@dataclass(frozen=True)
class Backend:
    store: Store
    table: TableDef
    client: Any | None
    """The low-level DynamoDB client, for table administration; None for the embedded store."""
    local_endpoint: str | None = None
    """DynamoDB Local's URL when this process runs it (worker processes connect there)."""


def table_of(settings: Settings) -> TableDef:
    return dataclasses.replace(TABLE, name=settings.table)


@contextlib.contextmanager
def open_backend(settings: Settings, table: TableDef | None = None) -> Iterator[Backend]:
    """The store the settings name, over `table` (the generated package's by default). With
    dynamodb-local the process runs (its data kept in the data directory) until the block
    ends, and the table is created when missing. The caller closes the store."""
    table = table or table_of(settings)
    if settings.store == "embedded":
        yield Backend(EmbeddedStore(table, path=settings.embedded_path), table, None)
        return
    if settings.store == "dynamodb":
        store = DynamoDBStore(
            table,
            endpoint_url=settings.dynamodb_endpoint,
            region=settings.region,
            idle_timeout=settings.dynamodb_idle_timeout,
        )
        yield Backend(store, table, store.client)
        return
    if settings.store != "dynamodb-local":
        raise SettingsError(f"unknown store {settings.store!r}")
    with DynamoDBLocal(data_dir=settings.data_dir / "dynamodb-local") as local:
        client = _local_client(local.endpoint_url)
        try:
            if not admin.describe(client, table.name):
                admin.create_table(client, table)
            store = DynamoDBStore(table, client=client, idle_timeout=settings.dynamodb_idle_timeout)
            yield Backend(store, table, client, local.endpoint_url)
        finally:
            client.close()


def _local_client(endpoint: str) -> Any:
    return make_client(
        endpoint,
        LOCAL_REGION,
        access_key_id=LOCAL_KEY_ID,
        secret_access_key=LOCAL_SECRET,
        read_timeout=LOCAL_READ_TIMEOUT,
    )


def worker_store(settings: Settings, local_endpoint: str | None) -> Store:
    """A worker process's store over the same data as its parent's backend: the embedded
    file, DynamoDB, or the DynamoDB Local its parent runs at `local_endpoint`."""
    table = table_of(settings)
    if local_endpoint is not None:
        return DynamoDBStore(
            table,
            client=_local_client(local_endpoint),
            idle_timeout=settings.dynamodb_idle_timeout,
        )
    if settings.store == "embedded":
        return EmbeddedStore(table, path=settings.embedded_path)
    return DynamoDBStore(
        table,
        endpoint_url=settings.dynamodb_endpoint,
        region=settings.region,
        idle_timeout=settings.dynamodb_idle_timeout,
    )

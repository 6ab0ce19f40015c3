"""The store a run measures, ready with the dataset: a copy of the cached embedded file, or
DynamoDB Local started on a copy of its cached data directory."""

from __future__ import annotations

import asyncio
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from bench.dataset import TENANTS, Dataset, embedded_cache, working_copy
from bench.targets import StoreName, create_local_table, local_client
from generated.table import TABLE
from keygraph.stores.dynamodb.local import DynamoDBLocal
from keygraph.stores.dynamodb.store import DynamoDBStore
from server.seed.tenant import seed


async def _seed_dynamodb(endpoint: str, dataset: Dataset, progress: bool) -> None:
    client = local_client(endpoint, read_timeout=120.0)
    store = DynamoDBStore(TABLE, client=client)
    try:
        for tenant in TENANTS:
            await seed(store, tenant, dataset.sizes, dataset.rng_seed, progress)
    finally:
        await store.close()
        client.close()


def dynamodb_local_cache(dataset: Dataset, progress: bool) -> Path:
    """A DynamoDB Local data directory holding the seeded table, built on first use."""
    done = dataset.cache_dir / "dynamodb-local"
    if done.is_dir():
        return done
    partial = dataset.cache_dir / "dynamodb-local.partial"
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    with DynamoDBLocal(data_dir=partial) as local:
        create_local_table(local.endpoint_url)
        asyncio.run(_seed_dynamodb(local.endpoint_url, dataset, progress))
    partial.rename(done)
    return done


@contextmanager
def store_environment(
    name: StoreName, dataset: Dataset, work: Path, progress: bool
) -> Iterator[tuple[Path, str | None]]:
    """(data directory, DynamoDB Local endpoint or None) of a store ready for one run."""
    if name == "embedded":
        yield working_copy(embedded_cache(dataset, progress), work / "embedded"), None
        return
    data = working_copy(dynamodb_local_cache(dataset, progress), work / "dynamodb-local")
    with DynamoDBLocal(data_dir=data) as local:
        settings_dir = work / "dynamodb-local-settings"
        settings_dir.mkdir(exist_ok=True)
        yield settings_dir, local.endpoint_url

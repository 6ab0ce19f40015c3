"""The soak's faults: DynamoDB Local behind a fault-injecting proxy, and what it injected."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from generated.table import TABLE
from keygraph.stores.dynamodb import admin
from keygraph.stores.dynamodb.local import (
    LOCAL_KEY_ID,
    LOCAL_REGION,
    LOCAL_SECRET,
    DynamoDBLocal,
)
from keygraph.stores.dynamodb.store import make_client
from testkit.faults import (
    RESET_AFTER,
    RESET_BEFORE,
    THROTTLING,
    THROUGHPUT_EXCEEDED,
    FaultProxy,
)

DATA_PLANE = (
    "GetItem",
    "BatchGetItem",
    "Query",
    "Scan",
    "PutItem",
    "UpdateItem",
    "DeleteItem",
    "BatchWriteItem",
    "TransactWriteItems",
)
FAULTS = (
    (THROTTLING, 0.025),
    (THROUGHPUT_EXCEEDED, 0.025),
    (RESET_BEFORE, 0.005),
    (RESET_AFTER, 0.005),
)
"""The faults of `--faults` and the share of data-plane calls each picks: 5% throttled, 1%
reset."""


@contextmanager
def faulty_local(data: Path) -> Iterator[FaultProxy]:
    """DynamoDB Local with the table made, behind a fault proxy (no rules yet)."""
    with DynamoDBLocal(data_dir=data / "dynamodb-local") as local:
        client = make_client(
            local.endpoint_url, LOCAL_REGION, 4, LOCAL_KEY_ID, LOCAL_SECRET, read_timeout=60
        )
        try:
            admin.create_table(client, TABLE)
        finally:
            client.close()
        with FaultProxy(local.endpoint_url, seed=20261125) as proxy:
            yield proxy


def faults_seen(proxy: FaultProxy) -> dict[str, Any]:
    """The data-plane calls the proxy saw and the faults it injected, by fault."""
    calls = sum(proxy.calls[operation] for operation in DATA_PLANE)
    injected: Counter[str] = Counter()
    for (_, name), count in proxy.injected.items():
        injected[name] += count
    return {
        "calls": calls,
        "injected": dict(injected),
        "shares": {name: round(count / calls, 4) for name, count in injected.items()},
    }

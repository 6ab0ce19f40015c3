"""A table's change stream, read the same way on both stores: DynamoDB Streams on DynamoDB
(and DynamoDB Local), a change log kept in the same SQLite transaction as each write on the
embedded store. A stream is shards of records in sequence order; a shard may close and
leave children (its lineage), and records older than the retention (24 hours) are trimmed.
A store's stream: `keygraph.stores.stream_of`.
"""

from .records import (
    RETENTION_SECONDS,
    Batch,
    ChangeStream,
    NoStream,
    Partitions,
    Position,
    Shard,
    Skipping,
    StreamRecord,
    Trimmed,
    Waking,
)

__all__ = [
    "RETENTION_SECONDS",
    "Batch",
    "ChangeStream",
    "NoStream",
    "Partitions",
    "Position",
    "Shard",
    "Skipping",
    "StreamRecord",
    "Trimmed",
    "Waking",
]

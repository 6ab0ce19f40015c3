"""The stores that run keygraph's plans: `EmbeddedStore` (one SQLite file) and
`DynamoDBStore` (AWS, DynamoDB Local or any endpoint), each over any `TableDef`.

Imported on first use, so the embedded store does not load boto3.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .dynamodb.store import DynamoDBStore
    from .embedded.store import EmbeddedStore

__all__ = ["DynamoDBStore", "EmbeddedStore"]


def __getattr__(name: str) -> Any:
    if name == "EmbeddedStore":
        from .embedded.store import EmbeddedStore

        return EmbeddedStore
    if name == "DynamoDBStore":
        from .dynamodb.store import DynamoDBStore

        return DynamoDBStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""PynamoDB models of the items the peer reads from the single table: each entity a model
over the shared PK/SK (and GSI1) attributes, told apart by its key prefixes."""

from __future__ import annotations

from typing import Any

from pynamodb.attributes import (
    ListAttribute,
    MapAttribute,
    NumberAttribute,
    UnicodeAttribute,
)
from pynamodb.indexes import AllProjection, GlobalSecondaryIndex
from pynamodb.models import Model


class _Item(Model):
    """One item of the table; `bind` points every model at a table and an endpoint."""

    class Meta:
        table_name = "keygraph"
        region = "us-east-1"
        host: str | None = None
        aws_access_key_id: str | None = None
        aws_secret_access_key: str | None = None
        max_pool_connections = 16

    PK = UnicodeAttribute(hash_key=True)
    SK = UnicodeAttribute(range_key=True)


class UsersByCreation(GlobalSecondaryIndex["UserItem"]):  # type: ignore[no-untyped-call]
    """GSI1 where a tenant's users sit under one partition, ordered by creation."""

    class Meta:
        index_name = "GSI1"
        projection = AllProjection()

    GSI1PK = UnicodeAttribute(hash_key=True)
    GSI1SK = UnicodeAttribute(range_key=True)


class UserItem(_Item):
    user_id = UnicodeAttribute()
    email = UnicodeAttribute()
    name = UnicodeAttribute()
    created_at = UnicodeAttribute()
    version = NumberAttribute()
    group_ids = ListAttribute[str](null=True)
    GSI1PK = UnicodeAttribute(null=True)
    GSI1SK = UnicodeAttribute(null=True)
    by_creation = UsersByCreation()


class OrderLine(MapAttribute[str, Any]):
    sku = UnicodeAttribute()
    name = UnicodeAttribute()
    quantity = NumberAttribute()
    unit_price_cents = NumberAttribute()


class UserOrderItem(_Item):
    """An order's copy in its user's partition (SK ORDER#<created>#<id>), newest last."""

    order_id = UnicodeAttribute()
    user_id = UnicodeAttribute()
    status = UnicodeAttribute()
    total_cents = NumberAttribute()
    currency = UnicodeAttribute()
    created_at = UnicodeAttribute()
    version = NumberAttribute()
    items = ListAttribute(of=OrderLine)


class GroupItem(_Item):
    group_id = UnicodeAttribute()
    name = UnicodeAttribute()
    created_at = UnicodeAttribute()


def bind(endpoint: str, table: str, access_key_id: str, secret_access_key: str) -> None:
    """Point every model at `table` on `endpoint` (before the first request)."""
    meta = _Item.Meta
    meta.table_name = table
    meta.host = endpoint
    meta.aws_access_key_id = access_key_id
    meta.aws_secret_access_key = secret_access_key

"""Request checks the embedded store makes so that it refuses what DynamoDB refuses, with
DynamoDB's wording."""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from keygraph.errors import ValidationError
from keygraph.plan import Condition, IndexDef, SortCondition, TableDef, Update, WriteAction

from .values import ITEM_SIZE_LIMIT, encode_item, utf8_size

BATCH_GET_LIMIT = 100
BATCH_WRITE_LIMIT = 25
TRANSACTION_LIMIT = 100
TRANSACTION_PAYLOAD_LIMIT = 4 * 1024 * 1024
_PARTITION_KEY_BYTES = 2048
_SORT_KEY_BYTES = 1024


def _key_value(name: str, value: Any, limit: int) -> str:
    if not isinstance(value, str):
        raise ValidationError("One or more parameter values were invalid: Type mismatch for key")
    if not value:
        raise ValidationError(
            "One or more parameter values are not valid. The AttributeValue for a key "
            f"attribute cannot contain an empty string value. Key: {name}"
        )
    if utf8_size(value) > limit:
        raise ValidationError(
            "Hash primary key values must be under 2048 bytes, and range primary key values "
            "must be under 1024 bytes"
        )
    return value


def _index_key_size(value: str, limit: int) -> None:
    if utf8_size(value) > limit:
        raise ValidationError("One or more parameter values were invalid: Size limit exceeded")


def sort_condition(sort: SortCondition) -> None:
    """A query's sort condition values, each held to the sort key limit as DynamoDB holds
    them (the two bounds of a between each, not together)."""
    for value in (sort.value, sort.high):
        if isinstance(value, str) and utf8_size(value) > _SORT_KEY_BYTES:
            raise ValidationError(
                "One or more parameter values were invalid: Aggregated size of all range keys "
                f"has exceeded the size limit of {_SORT_KEY_BYTES} bytes"
            )


def key(table: TableDef, key: Mapping[str, Any]) -> tuple[str, str]:
    """The (partition, sort) values of a key naming exactly the table's key attributes."""
    partition, sort = key.get(table.partition_key), key.get(table.sort_key)
    if (
        len(key) == 2
        and type(partition) is str
        and type(sort) is str
        and 0 < len(partition) <= _PARTITION_KEY_BYTES
        and 0 < len(sort) <= _SORT_KEY_BYTES
        and partition.isascii()  # then its UTF-8 takes a byte a character
        and sort.isascii()
    ):
        return partition, sort  # nothing to refuse: spared the checks below
    if set(key) != {table.partition_key, table.sort_key}:
        raise ValidationError("The provided key element does not match the schema")
    return (
        _key_value(table.partition_key, key[table.partition_key], _PARTITION_KEY_BYTES),
        _key_value(table.sort_key, key[table.sort_key], _SORT_KEY_BYTES),
    )


def item(table: TableDef, item: Mapping[str, Any], size: int) -> tuple[str, str]:
    """Check a whole item (keys, index keys and their sizes, its size); return its primary
    key values."""
    if table.partition_key not in item or table.sort_key not in item:
        raise ValidationError("One of the required keys was not given a value")
    values = (
        _key_value(table.partition_key, item[table.partition_key], _PARTITION_KEY_BYTES),
        _key_value(table.sort_key, item[table.sort_key], _SORT_KEY_BYTES),
    )
    for index in table.indexes:
        for name in (index.partition_key, index.sort_key):
            if name is None or name not in item:
                continue
            value = item[name]
            if not isinstance(value, str):
                raise ValidationError(
                    "One or more parameter values were invalid: Type mismatch for Index Key"
                )
            if not value:
                raise ValidationError(
                    "One or more parameter values are not valid. A value specified for a "
                    "secondary index key is not supported. The AttributeValue for a key "
                    f"attribute cannot contain an empty string value. IndexName: {index.name}, "
                    f"IndexKey: {name}"
                )
            _index_key_size(value, _index_limit(index, name))
    if size > ITEM_SIZE_LIMIT:
        raise ValidationError("Item size has exceeded the maximum allowed size")
    return values


def _index_limit(index: IndexDef, name: str) -> int:
    return _PARTITION_KEY_BYTES if name == index.partition_key else _SORT_KEY_BYTES


def update(
    table: TableDef, set_: Mapping[str, Any], remove: Sequence[str], add: Mapping[str, int]
) -> None:
    for index in table.indexes:
        for name in (index.partition_key, index.sort_key):
            value = set_.get(name) if name is not None else None
            if isinstance(value, str) and name is not None:
                _index_key_size(value, _index_limit(index, name))
    for name in (*set_, *remove, *add):
        if name in (table.partition_key, table.sort_key):
            raise ValidationError(
                "One or more parameter values were invalid: Cannot update attribute "
                f"{name}. This attribute is part of the key"
            )
    overlap = (set(set_) & set(remove)) | (set(add) & (set(set_) | set(remove)))
    if overlap:
        raise ValidationError(
            "Invalid UpdateExpression: Two document paths overlap with each other; must "
            f"remove or rewrite one of these paths; path: [{sorted(overlap)[0]}]"
        )


def conditions(conditions: Sequence[Condition]) -> None:
    for condition in conditions:
        if condition.op not in ("exists", "not_exists", "equals", "less_than"):
            raise ValidationError(f"unknown condition {condition.op!r}")
        value = condition.value
        scalar = isinstance(value, str | int | Decimal) and not isinstance(value, bool)
        if condition.op == "less_than" and not scalar:
            raise ValidationError("less_than compares with a number or a string")
        if not condition.attribute:
            raise ValidationError("a condition must name an attribute")


def client_token(token: str, actions: Sequence[WriteAction]) -> str:
    """A digest of a transaction's actions, to recognise it when its token comes again;
    DynamoDB's checks of the token."""
    if not 1 <= len(token) <= 36:
        raise ValidationError("ClientRequestToken must be 1 to 36 characters")
    return hashlib.sha256(repr(list(actions)).encode()).hexdigest()


def count(what: str, n: int, limit: int) -> None:
    if n == 0:
        raise ValidationError(f"{what} needs at least one entry")
    if n > limit:
        raise ValidationError(f"Too many items requested for the {what} call (limit {limit})")


def distinct(keys: Sequence[tuple[str, str]], message: str) -> None:
    if len(set(keys)) != len(keys):
        raise ValidationError(message)


def transaction_payload(actions: Sequence[WriteAction], put_sizes: Sequence[int]) -> None:
    """Refuse a transaction weighing more than 4 MB (4 MiB, as DynamoDB Local 3.3.1 counts):
    each Put's item (`put_sizes`, 0 for other actions), each Update's key and the attributes
    it sets; deletes and condition checks weigh nothing. DynamoDB Local counts an update's
    expression text where this counts the names it sets: a few bytes apart."""
    total = sum(put_sizes)
    for action in actions:
        if isinstance(action, Update):
            total += encode_item({**action.key, **action.set})[1]
    if total > TRANSACTION_PAYLOAD_LIMIT:
        raise ValidationError(f"Transaction payload size cannot exceed 4MB. Payload Size: {total}")

"""Models of stored items made without validation: a generated `from_item` uses these once
its checks (codegen/stored_checks.py) have shown that validation would keep every loaded
value as it is, and validates any other item as a model's constructor does."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any, TypeVar

from pydantic import BaseModel
from pydantic_core import SchemaValidator, core_schema

M = TypeVar("M", bound=BaseModel)

_new = object.__new__
_slots = BaseModel.__dict__
_set_dict = _slots["__dict__"].__set__
_set_fields_set = _slots["__pydantic_fields_set__"].__set__
_set_extra = _slots["__pydantic_extra__"].__set__
_set_private = _slots["__pydantic_private__"].__set__


def matcher(pattern: str) -> Callable[[Any], bool]:
    """Whether a string matches `pattern` as a model field's `pattern` constraint has it
    matched: by pydantic's own regular expression engine."""
    return SchemaValidator(core_schema.str_schema(pattern=pattern)).isinstance_python


def are_ids(values: list[Any], longest: int) -> bool:
    """Whether every value is an Id validation keeps as it is: a str of 1 to `longest`
    characters, none a control character (printable is stricter)."""
    for value in values:
        if type(value) is not str or not 0 < len(value) <= longest:
            return False
    joined = "".join(values)
    # ASCII letters and digits, as most ids are, are printable: its bytes tell in half the time
    return (joined.isascii() and joined.encode().isalnum()) or joined.isprintable()


def is_utc(value: Any) -> bool:
    """Whether `value` is a datetime in UTC: what the models' UtcDatetime keeps as it is."""
    return type(value) is datetime and value.tzinfo is UTC


_ALL_FIELDS: dict[type[BaseModel], set[str]] = {}
"""Each model class's field names: the fields set of every model `built` makes, shared (a
model copied with changes gets a set of its own, as pydantic copies it first)."""


def built(cls: type[M], values: dict[str, Any]) -> M:
    """The model `cls(**values)` would make, for values it would keep as they are (every
    field given, in the order of the fields), without validating them again."""
    model = _new(cls)
    _set_dict(model, values)  # a BaseModel's slots, set as object.__setattr__ would
    fields = _ALL_FIELDS.get(cls)
    if fields is None:
        fields = _ALL_FIELDS[cls] = set(values)
    _set_fields_set(model, fields)
    _set_extra(model, None)
    _set_private(model, None)
    return model

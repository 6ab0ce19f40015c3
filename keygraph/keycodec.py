"""How attribute values become key segments, and back.

Segments are joined by "#". A value is escaped so that it can never contain the delimiter:
"%" becomes "%25" and "#" becomes "%23"; nothing else changes, so case and every other
character are kept. Escaping is injective and the escaped text holds no "#", so a value can
never end a segment early and reach another item's key. Empty values are refused: "USER#"
would be a prefix of every user key.

Datetimes are written as fixed-width UTC ("2024-01-02T03:04:05.000006Z"), dates as ISO dates
("2024-01-02") and non-negative integers zero-padded to their declared width, so string order
is value order.

Every key a builder makes passes `sized`: DynamoDB stores partition keys of up to 2,048 bytes
of UTF-8 and sort keys of up to 1,024 (on the table and on every index), so a longer key is
refused here, naming the value that made it long, before any store is asked.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, date, datetime

from .errors import BadArgument, KeyTooLong

DELIMITER = "#"
PARTITION_KEY_BYTES = 2048
"""The longest partition key DynamoDB stores, in bytes of UTF-8."""
SORT_KEY_BYTES = 1024
"""The longest sort key DynamoDB stores, in bytes of UTF-8."""


def escape(value: str) -> str:
    if not value:
        raise BadArgument("a key value must not be empty")
    return value.replace("%", "%25").replace(DELIMITER, "%23")


def unescape(segment: str) -> str:
    return segment.replace("%23", DELIMITER).replace("%25", "%")


def escape_path(parts: Sequence[str]) -> str:
    """A path attribute: each part escaped, joined by the delimiter."""
    if isinstance(parts, str):
        raise BadArgument("a path is a sequence of parts, not a string")
    if not parts:
        raise BadArgument("a path must have at least one part")
    return DELIMITER.join(escape(part) for part in parts)


def unescape_path(text: str) -> tuple[str, ...]:
    return tuple(unescape(part) for part in text.split(DELIMITER))


def format_datetime(value: datetime) -> str:
    if value.tzinfo is None:
        raise BadArgument("a datetime must carry a time zone")
    try:
        utc = value.astimezone(UTC)
    except OverflowError as exc:  # within a day of year 1 or 9999, before or past it in UTC
        raise BadArgument(f"{value.isoformat()} is out of range in UTC") from exc
    # isoformat always writes four-digit years (strftime's %Y does not below 1000 on glibc).
    return utc.isoformat(timespec="microseconds").replace("+00:00", "Z")


def parse_datetime(text: str) -> datetime:
    return datetime.fromisoformat(text)


def format_date(value: date) -> str:
    if isinstance(value, datetime):
        raise BadArgument("a date attribute takes a date, not a datetime")
    return value.isoformat()


def parse_date(text: str) -> date:
    return date.fromisoformat(text)


def format_int(value: int, width: int) -> str:
    text = str(value)
    if value < 0 or len(text) > width:
        raise BadArgument(f"{value} does not fit a key of {width} digits")
    return text.zfill(width)


LAST_CHARACTER = "\U0010ffff"
"""The highest code point: every key segment below a prefix sorts before it."""


def collection(head: str) -> tuple[str, str]:
    """The sort-key range of an item collection: the key `head` itself and every key below
    it at a delimiter (head#...), but no longer value (head0 is another item)."""
    return head, head + DELIMITER + LAST_CHARACTER


def between(low: str, high: str, low_template: str, high_template: str) -> tuple[str, str]:
    """The bounds of a between sort condition, built from the two templates, when `low` does
    not sort after `high` (keys compare as DynamoDB compares them: by their UTF-8 bytes, which
    is the order of their code points); BadArgument naming the arguments of each bound
    otherwise, a range DynamoDB refuses (and no item could be in)."""
    if low <= high:
        return low, high
    raise BadArgument(
        f"{_arguments(low_template)} ({low!r}, the lower bound {low_template}) sorts after "
        f"{_arguments(high_template)} ({high!r}, the upper bound {high_template}): a range "
        "must not end before it starts"
    )


def _arguments(template: str) -> str:
    """The placeholders of a template, by name: the arguments that fill it in."""
    names = [p[1:-1] for p in template.split(DELIMITER) if p.startswith("{")]
    return " and ".join(names) if names else repr(template)


def split(key: str, expected: int) -> list[str]:
    """Split a key into its raw segments, checking the count."""
    parts = key.split(DELIMITER)
    if len(parts) != expected:
        raise BadArgument(f"key {key!r} has {len(parts)} segments, expected {expected}")
    return parts


def sized(key: str, limit: int, template: str) -> str:
    """`key`, built from `template`, when it fits `limit` bytes of UTF-8 (PARTITION_KEY_BYTES
    or SORT_KEY_BYTES); KeyTooLong naming the longest value otherwise, BadArgument for text
    that is not Unicode (a lone surrogate)."""
    if key.isascii():
        size = len(key)
    else:
        try:
            size = len(key.encode())
        except UnicodeEncodeError as exc:
            raise BadArgument(f"a key value must be valid Unicode: {exc.reason}") from exc
    if size <= limit:
        return key
    kind = "partition" if limit == PARTITION_KEY_BYTES else "sort"
    culprit = _longest_value(template, key)
    raise KeyTooLong(
        (f"{culprit} is too long: " if culprit else "a value is too long: ")
        + f"the key {template} would be {size:,} bytes of UTF-8, and DynamoDB allows a {kind} "
        f"key at most {limit:,}"
    )


def _longest_value(template: str, key: str) -> str | None:
    """The placeholder of `template` whose value takes the most bytes of `key`. A key has
    more segments than its template when a path fills one placeholder; that placeholder is
    the one where the literal segments on both sides line up."""
    names, segments = template.split(DELIMITER), key.split(DELIMITER)
    extra = len(segments) - len(names)
    for at in range(len(names)) if extra else (len(names),):
        spans = [(i, i + 1) if i < at else (i + extra, i + extra + 1) for i in range(len(names))]
        if at < len(names):
            spans[at] = (at, at + extra + 1)
        values = [DELIMITER.join(segments[a:b]) for a, b in spans]
        pairs = list(zip(names, values, strict=True))
        if all(name == value for name, value in pairs if not name.startswith("{")):
            placeholders = [(len(v.encode(errors="replace")), n) for n, v in pairs if n[:1] == "{"]
            return max(placeholders)[1].strip("{}") if placeholders else None
    return None

"""The JSON request log an app writes (app.py): one object a line on stderr, and one line per
GraphQL request over HTTP with its id, tenant, operation, status, code, store calls and
waves, capacity units and duration; a warning when it failed or was refused, else info. A
request's id is the caller's X-Request-Id when that is a short plain one, else one made
here."""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import sys
import time
from typing import Any

from keygraph.ids import new_id

from .answer import OK, REPLAYED

log = logging.getLogger("keygraph.request")

REQUEST_ID_HEADER = "x-request-id"
REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,64}")
"""A caller's request id that is kept: anything else (longer, other characters) is replaced."""
OPERATION_CHARS = 200
"""Characters of an operation's name a line holds (a name is as long as its document)."""
REQUEST_FIELDS = (
    "request_id",
    "tenant",
    "operation",
    "status",
    "code",
    "store_calls",
    "store_waves",
    "read_units",
    "write_units",
    "duration_ms",
)
LOGGERS = ("keygraph", "uvicorn", "uvicorn.error")


class JsonFormatter(logging.Formatter):
    """A record as one JSON object: time, level, logger, message, the request's fields it
    carries, and its exception's traceback."""

    def format(self, record: logging.LogRecord) -> str:
        entry: dict[str, Any] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in REQUEST_FIELDS:
            value = getattr(record, name, None)
            if value is not None:
                entry[name] = value
        if record.exc_info:
            entry["exception"] = self.formatException(record.exc_info)
        return json.dumps(entry, default=str)


class _Stderr(logging.StreamHandler):  # type: ignore[type-arg]
    """Writes to sys.stderr as it is when a record comes (replaced since, by a test's
    capture or a runtime's, the one it was made with may be closed)."""

    def __init__(self) -> None:
        logging.Handler.__init__(self)

    @property
    def stream(self) -> Any:
        return sys.stderr


def configure(level: int = logging.INFO) -> None:
    """Send keygraph's and uvicorn's logs to stderr as JSON lines, uvicorn's access log off
    (the request log takes its place)."""
    handler = _Stderr()
    handler.setFormatter(JsonFormatter())
    for name in LOGGERS:
        logger = logging.getLogger(name)
        logger.handlers = [handler]
        logger.setLevel(level)
        logger.propagate = False
    logging.getLogger("uvicorn.access").disabled = True


class _RequestIds:
    """Request ids unique across processes and hosts without a random draw each: a ULID
    drawn once per process (again in a forked child), then a counter."""

    def __init__(self) -> None:
        self._prefix, self._count = new_id(), itertools.count()
        os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        self._prefix, self._count = new_id(), itertools.count()

    def next(self) -> str:
        return f"{self._prefix}-{next(self._count)}"


_request_ids = _RequestIds()


def request_id(supplied: str | None) -> str:
    """The id of a request whose X-Request-Id is `supplied`: it, when it is 1 to 64 letters,
    digits, dots, dashes or underscores; else a new one."""
    if supplied is not None and REQUEST_ID.fullmatch(supplied):
        return supplied
    return _request_ids.next()


def log_request(
    *,
    request_id: str,
    tenant: str | None,
    operation: str | None,
    status: int,
    code: str | None,
    store_calls: int,
    store_waves: int,
    read_units: float,
    write_units: float,
    started: float,
) -> None:
    """Logs a request's line: `code` None (or OK) when it answered without errors, REPLAYED
    for an Idempotency-Key's retry; `started` its time.perf_counter() when it came in."""
    code = None if code == OK else code
    if operation is not None and len(operation) > OPERATION_CHARS:
        operation = operation[:OPERATION_CHARS] + "..."
    fields = {
        "request_id": request_id,
        "tenant": tenant,
        "operation": operation,
        "status": status,
        "code": code,
        "store_calls": store_calls,
        "store_waves": store_waves,
        "read_units": read_units,
        "write_units": write_units,
        "duration_ms": round((time.perf_counter() - started) * 1000, 2),
    }
    if status >= 500 or code not in (None, REPLAYED):
        log.warning("graphql request failed: %s", code, extra=fields)
    else:
        log.info("graphql request", extra=fields)

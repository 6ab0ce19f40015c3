"""Trusted-documents manifests: the operations a server runs, by the sha256 of their text.

Two formats are read: Apollo's persisted-query manifest (`{"format":
"apollo-persisted-query-manifest", "version": 1, "operations": [{"id", "name", "type",
"body"}]}`) and a plain `{hash: text}` object. Every hash must be the lower-case hex sha256
of its text's UTF-8 bytes; a file breaking any rule is refused whole, with the reason."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from typing import Any

import orjson

APOLLO_FORMAT = "apollo-persisted-query-manifest"
_HASH = re.compile(r"^[0-9a-f]{64}$")


class ManifestError(ValueError):
    """A manifest that cannot be used, with where and why."""


def sha256(text: str) -> str:
    """The hash a document is known by."""
    return hashlib.sha256(text.encode()).hexdigest()


def is_hash(value: object) -> bool:
    """Whether `value` has the shape of a document's hash."""
    return isinstance(value, str) and _HASH.match(value) is not None


def _checked(documents: dict[str, str], key: object, text: object, where: str) -> None:
    if not is_hash(key):
        raise ManifestError(f"{where}: {key!r} is no sha256 hash (64 lower-case hex digits)")
    if not isinstance(text, str) or not text:
        raise ManifestError(f"{where}: the document of {key} must be a non-empty string")
    if sha256(text) != key:
        raise ManifestError(f"{where}: {key} is not the sha256 of its document")
    documents[str(key)] = text


def parse(data: Any) -> dict[str, str]:
    """The manifest's documents by hash; ManifestError when it breaks a rule."""
    if not isinstance(data, dict):
        raise ManifestError("a manifest must be a JSON object")
    documents: dict[str, str] = {}
    if "format" not in data:
        for key, text in data.items():
            _checked(documents, key, text, "manifest")
        return documents
    if data["format"] != APOLLO_FORMAT or data.get("version") != 1:
        raise ManifestError(
            f"unknown manifest format {data['format']!r} version {data.get('version')!r} "
            f"(read: {APOLLO_FORMAT} version 1, or a {{hash: document}} object)"
        )
    operations = data.get("operations")
    if not isinstance(operations, list):
        raise ManifestError("`operations` must be a list")
    for index, operation in enumerate(operations):
        where = f"operations[{index}]"
        if not isinstance(operation, dict):
            raise ManifestError(f"{where} must be an object")
        _checked(documents, operation.get("id"), operation.get("body"), where)
    return documents


def load(path: Path) -> dict[str, str]:
    """The documents of the manifest at `path`; ManifestError when it cannot be used."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise ManifestError(f"trusted documents {path}: {exc.strerror or exc}") from exc
    try:
        return parse(orjson.loads(raw))
    except orjson.JSONDecodeError as exc:
        raise ManifestError(f"trusted documents {path}: not JSON ({exc})") from exc
    except ManifestError as exc:
        raise ManifestError(f"trusted documents {path}: {exc}") from exc


def apollo_manifest(operations: list[tuple[str | None, str, str]]) -> dict[str, Any]:
    """An Apollo persisted-query manifest of (name, type, text) operations."""
    return {
        "format": APOLLO_FORMAT,
        "version": 1,
        "operations": [
            {"id": sha256(body), "name": name, "type": kind, "body": body}
            for name, kind, body in operations
        ],
    }

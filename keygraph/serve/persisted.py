"""Persisted operations over HTTP: a request's `extensions.persistedQuery` (Apollo's
automatic persisted queries) resolved to its document before either executor runs.

A hash alone runs the document registered under it, or is answered PERSISTED_QUERY_NOT_FOUND
(HTTP 200, message "PersistedQueryNotFound", which Apollo Client and urql take as the sign
to send the text); a hash with its text registers the text, once its sha256 is checked and
it prepares cleanly (a text that does not is answered with its errors, and not kept).
Registered documents are kept per worker, least recently used first out, within a count and
a size: the text is no tenant's data (every answer is computed for its own caller), so a
document one tenant registered serves every tenant. A retry that reaches another worker sends
the text again, as the protocol does on NOT_FOUND, so workers need not share them.

With trusted documents (a manifest, manifest.py) nothing registers and only the manifest's
documents run: an unknown hash is PERSISTED_QUERY_NOT_FOUND, any other text
PERSISTED_QUERY_REQUIRED (HTTP 403)."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .manifest import is_hash, sha256

NOT_FOUND = "PERSISTED_QUERY_NOT_FOUND"
REQUIRED = "PERSISTED_QUERY_REQUIRED"
MISMATCH = "PERSISTED_QUERY_HASH_MISMATCH"
MAX_DOCUMENTS = 2048
MAX_BYTES = 8 * 1024 * 1024
"""Registered documents a worker keeps, and their total size in UTF-8 bytes at most."""


@dataclass(frozen=True, slots=True)
class Refusal:
    """Why a persisted operation must not run: HTTP status, error code and message."""

    status: int
    code: str
    message: str


class Documents:
    """The documents a worker knows by hash: registered ones (bounded, least recently used
    out first), or a fixed trusted set."""

    def __init__(
        self,
        trusted: dict[str, str] | None = None,
        max_documents: int = MAX_DOCUMENTS,
        max_bytes: int = MAX_BYTES,
    ) -> None:
        self.trusted = trusted
        self._registered: OrderedDict[str, tuple[str, int]] = OrderedDict()
        self._bytes = 0
        self.max_documents, self.max_bytes = max_documents, max_bytes

    def __len__(self) -> int:
        return len(self.trusted if self.trusted is not None else self._registered)

    def get(self, key: str) -> str | None:
        """The document of hash `key`, if known."""
        if self.trusted is not None:
            return self.trusted.get(key)
        found = self._registered.get(key)
        if found is None:
            return None
        self._registered.move_to_end(key)
        return found[0]

    def register(self, key: str, text: str) -> str:
        """Keep `text` (whose sha256 is `key`) and give back the text kept under `key`: the
        same string object each time, so the caches keyed by text hit at once."""
        known = self.get(key)
        if known is not None or self.trusted is not None:
            return text if known is None else known
        size = len(text.encode())
        if size > self.max_bytes:
            return text
        registered = self._registered
        while registered and (
            len(registered) >= self.max_documents or self._bytes + size > self.max_bytes
        ):
            self._bytes -= registered.popitem(last=False)[1][1]
        registered[key] = (text, size)
        self._bytes += size
        return text


def _bad(message: str) -> Refusal:
    return Refusal(400, "BAD_REQUEST", message)


def _hash_of(persisted: Any) -> str | Refusal:
    """The sha256 hash a `persistedQuery` extension names, or why it names none."""
    if not isinstance(persisted, dict):
        return _bad("extensions.persistedQuery must be an object")
    version = persisted.get("version")
    if version != 1 or isinstance(version, bool):
        return _bad("extensions.persistedQuery.version must be 1")
    key = persisted.get("sha256Hash")
    if not is_hash(key):
        return _bad(
            "extensions.persistedQuery.sha256Hash must be a sha256 hash (64 lower-case hex digits)"
        )
    return str(key)


def resolve(
    data: dict[str, Any], documents: Documents, runs: Callable[[str], bool]
) -> str | Refusal | None:
    """The document `data` (a request's JSON) runs, when it differs from its `query`; a
    Refusal when it must not run; None when `data` runs as it is. A text is registered only
    when `runs` says it prepares cleanly (one that does not is answered with its errors)."""
    extensions = data.get("extensions")
    persisted = extensions.get("persistedQuery") if isinstance(extensions, dict) else None
    query = data.get("query")
    trusted = documents.trusted
    if persisted is None:
        if trusted is not None and (not isinstance(query, str) or sha256(query) not in trusted):
            message = "this server runs only its trusted documents: send one by its hash"
            return Refusal(403, REQUIRED, message)
        return None
    key = _hash_of(persisted)
    if isinstance(key, Refusal):
        return key
    if query is None or query == "":
        known = documents.get(key)
        return Refusal(200, NOT_FOUND, "PersistedQueryNotFound") if known is None else known
    if not isinstance(query, str):
        return None  # refused as any request whose query is no string
    if sha256(query) != key:
        return Refusal(400, MISMATCH, "provided sha256Hash does not match the query")
    if trusted is not None and key not in trusted:
        return Refusal(200, NOT_FOUND, "PersistedQueryNotFound")
    return documents.register(key, query) if runs(query) else query

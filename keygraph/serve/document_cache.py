"""The prepared documents a worker remembers, bounded by memory: at most so many entries and
so many characters of document text in all (a parsed and validated document takes memory in
proportion to its text), the least recently used dropped first. The requests answered count
its hits and misses once each, which dev mode reports in `extensions.documentCache`."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Hashable
from typing import Any

DOCUMENTS_KEPT = 512
"""Documents a cache keeps by default."""
DOCUMENT_CHARS_KEPT = 2_000_000
"""Characters of document text those hold in all by default: their memory, about 20 KB per
100."""


class DocumentCache:
    """A least-recently-used map whose entries each weigh the characters of their text."""

    def __init__(self, max_entries: int, max_chars: int) -> None:
        self.max_entries = max_entries
        self.max_chars = max_chars
        self._entries: OrderedDict[Hashable, tuple[Any, int]] = OrderedDict()
        self.chars = 0
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable) -> Any:
        """The value kept under `key` (now the most recently used), else None."""
        found = self._entries.get(key)
        if found is None:
            return None
        self._entries.move_to_end(key)
        return found[0]

    def put(self, key: Hashable, value: Any, chars: int) -> None:
        """Keep `value` under `key`, weighing `chars`; one heavier than the whole cache is
        not kept. Older entries go until both bounds hold."""
        old = self._entries.pop(key, None)
        if old is not None:
            self.chars -= old[1]
        if chars > self.max_chars:
            return
        self._entries[key] = (value, chars)
        self.chars += chars
        while len(self._entries) > self.max_entries or self.chars > self.max_chars:
            _, (_, dropped) = self._entries.popitem(last=False)
            self.chars -= dropped

    def count(self, found: str) -> None:
        """Count one request's document as a hit (found by its text or its shape) or a
        miss (prepared for it)."""
        if found == "prepared":
            self.misses += 1
        else:
            self.hits += 1

    def report(self) -> dict[str, Any]:
        """Hits, misses, hit rate, entries and characters kept, for `extensions`."""
        asked = self.hits + self.misses
        return {
            "hits": self.hits,
            "misses": self.misses,
            "hitRate": round(self.hits / asked, 4) if asked else 0.0,
            "entries": len(self._entries),
            "chars": self.chars,
        }

"""The documents an app has parsed and validated, by their text: a text sent again skips
the lexer, the parser and validation, which cost far more than running most operations.
Only documents that passed are kept, at most `size` of them (the least recently used
leave first), so a stream of distinct texts costs what it did without the cache."""

from __future__ import annotations

from collections import OrderedDict

from graphql import DocumentNode

KEPT = 512
"""Documents kept, by default."""


class Documents:
    """Valid documents by text, least recently used first."""

    def __init__(self, size: int = KEPT) -> None:
        self.size = size
        self._kept: OrderedDict[str, DocumentNode] = OrderedDict()

    def get(self, text: str) -> DocumentNode | None:
        found = self._kept.get(text)
        if found is not None:
            self._kept.move_to_end(text)
        return found

    def keep(self, text: str, document: DocumentNode) -> None:
        self._kept[text] = document
        self._kept.move_to_end(text)
        while len(self._kept) > self.size:
            self._kept.popitem(last=False)

"""How a claim's value is folded before it keys the claim, so that two spellings of one
value cannot both be claimed."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable


def casefolded(text: str) -> str:
    """The text case-folded and in NFC: Unicode's canonical caseless match (D145), so that
    "Café", "CAFÉ" and "cafe" with a combining accent fold alike, as do "ß" and "SS"."""
    return unicodedata.normalize("NFC", unicodedata.normalize("NFD", text).casefold())


FOLDS: dict[str, Callable[[str], str]] = {"casefold": casefolded}
"""The folds a spec names (`unique.<attr>.fold`), by name."""

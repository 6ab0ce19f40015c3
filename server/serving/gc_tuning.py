"""Garbage-collector settings for a serving process.

What start-up built (schema, types, caches) is frozen out of every generation, so that no
collection rescans it. The young generation is collected every 700 net allocations, as
CPython does by default: collecting it every 20,000 instead (with the freeze, Q1 1.66 → 1.52
ms of CPU time, Q3 254 → 239 ms in process) made a server under the soak's sustained load
grow its anonymous memory, in Python's allocator arenas, by 40 to 60 bytes a request for as
long as the soak ran (60 minutes); at 700, 15 side by side over 30 minutes, though the soak
at 8 connections still grows (bench/README.md, "The DynamoDB Local soak's memory").
`KEYGRAPH_GC_YOUNG_THRESHOLD` sets it.
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 700


def tune_for_serving(young_threshold: int = YOUNG_THRESHOLD) -> None:
    """Freeze the objects allocated so far and collect the young generation every
    `young_threshold` net allocations; the older generations keep their thresholds."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(young_threshold, middle, old)

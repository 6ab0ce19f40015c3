"""Garbage-collector settings for a serving process.

A request allocates thousands of short-lived objects (parsed values, models, GraphQL objects)
that reference counting frees on its own; CPython's default still runs a young-generation
collection every 700 net allocations, several per request, each rescanning what survived.
Freezing what start-up built (schema, types, caches) out of every generation, and collecting
the young generation every 20,000 allocations, together took the benchmark's Q1 from 1.66 to
1.52 ms of CPU time and Q3 from 254 to 239 ms (same process, side by side). How often the
young generation is collected is a setting (`KEYGRAPH_GC_YOUNG_THRESHOLD`): the soak's
anonymous memory on DynamoDB Local grows with 20,000 (bench/README.md, "The DynamoDB Local
soak's memory").
"""

from __future__ import annotations

import gc

YOUNG_THRESHOLD = 20_000


def tune_for_serving(young_threshold: int = YOUNG_THRESHOLD) -> None:
    """Freeze the objects allocated so far and collect the young generation every
    `young_threshold` net allocations; the older generations keep their thresholds."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(young_threshold, middle, old)

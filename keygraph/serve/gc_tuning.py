"""Garbage-collector settings for a serving process, made once its app is built.

What start-up built (schema, types, caches) is frozen out of every generation, so that no
collection rescans it. The young generation is collected every 5,000 net allocations, not
CPython's 700: a request answered leaves no reference cycles
(tests/server/edge/test_request_memory.py), so a collection finds little to free, while at
700 it ran inside the requests that read much and rescanned what they held (GC time a
request at 700 and 5,000: Q4 0.16 and 0 ms, 4% of its CPU; Q3 1.6 and 0.8 ms). Side by side
under the soak's load the two grow a server's memory alike (83 and 75 bytes a request,
bench/README.md, "The DynamoDB Local soak's memory"); while requests still left cycles,
20,000 grew it by 40 to 60 bytes a request more than 700. `Listening.gc_young_threshold` sets
it (the repository's server: `KEYGRAPH_GC_YOUNG_THRESHOLD`).
"""

from __future__ import annotations

import gc

GC_YOUNG_THRESHOLD = 5000
"""The young generation's threshold a serving process runs with."""


def tune_for_serving(young_threshold: int = GC_YOUNG_THRESHOLD) -> None:
    """Freeze the objects allocated so far and collect the young generation every
    `young_threshold` net allocations; the older generations keep their thresholds."""
    gc.freeze()
    _, middle, old = gc.get_threshold()
    gc.set_threshold(young_threshold, middle, old)

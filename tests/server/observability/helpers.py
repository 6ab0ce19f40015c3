"""/metrics read back as numbers: the token it is asked with, and its samples by name and
labels (tests/keygraph/api/metrics_samples.py)."""

from __future__ import annotations

import httpx

from tests.keygraph.api.metrics_samples import Samples
from tests.keygraph.api.metrics_samples import scrape as scrape_samples

TOKEN = "metrics-token-" + "m" * 20


async def scrape(client: httpx.AsyncClient, token: str = TOKEN) -> Samples:
    """Every sample of /metrics, asked with `token`: (name, labels) to value."""
    return await scrape_samples(client, token)


def value(samples: Samples, name: str, **labels: str) -> float:
    """A sample's value (0 when absent)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def total(samples: Samples, name: str, **labels: str) -> float:
    """The sum of the samples of `name` whose labels include `labels`."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and wanted <= ls)

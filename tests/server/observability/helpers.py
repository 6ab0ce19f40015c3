"""/metrics read back as numbers: the token it is asked with, and its samples by name and
labels."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

TOKEN = "metrics-token-" + "m" * 20
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


async def scrape(client: httpx.AsyncClient, token: str = TOKEN) -> Samples:
    """Every sample of /metrics, asked with `token`: (name, labels) to value."""
    response = await client.get("/metrics", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def value(samples: Samples, name: str, **labels: str) -> float:
    """A sample's value (0 when absent)."""
    return samples.get((name, frozenset(labels.items())), 0.0)


def total(samples: Samples, name: str, **labels: str) -> float:
    """The sum of the samples of `name` whose labels include `labels`."""
    wanted = set(labels.items())
    return sum(v for (n, ls), v in samples.items() if n == name and wanted <= ls)

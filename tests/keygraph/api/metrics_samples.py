"""An app's /metrics read back as numbers."""

from __future__ import annotations

import httpx
from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]
"""Each sample's value by its name and labels."""


async def scrape(client: httpx.AsyncClient, token: str) -> Samples:
    """Every sample of /metrics, asked with `token`: (name, labels) to value."""
    response = await client.get("/metrics", headers={"Authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples

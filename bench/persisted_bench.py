"""What an automatic persisted query's hit saves, by the document's size: Q1 (a 72-byte
document) and SCREEN (a client's screen as Apollo Client sends it: fragments, __typename
everywhere, indented, 1.2 KB) sent by their sha256 against the same request sent as text,
over POST and over GET, requests alternating between the two; then, over POST, the hit, the
text and two kinds of text the worker has not seen in turns: the id inlined (a new text,
served by its shape's normalised document) and the text made new by a comment on an app
keeping no document (parsed and validated anew). All in one process on the compiled API,
on each executor (compiled, graphql-core). A request's cost is the process CPU time it takes (the
in-process client's own part is the same few microseconds for every arm). Prints one JSON
object and writes bench/results/persisted-embedded.json; bench/README.md records it.

`python -m bench persisted [--rounds N]`
"""

from __future__ import annotations

import json
import statistics
import urllib.parse
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench.asgi import AsgiClient
from bench.by_executor import (
    Send,
    clients,
    command_line,
    cycling,
    interleave,
    ratios,
    run_by_executor,
    user_cpu,
)
from bench.queries import Q1
from bench.targets import Executor
from keygraph.serve.document_cache import DOCUMENTS_KEPT
from keygraph.serve.manifest import sha256
from keygraph.stores.embedded.store import EmbeddedStore
from server.seed.tenant import SeedSizes

TENANT = "bench"
SIZES = SeedSizes(users=50, orders=100, groups=5, org_nodes=5, org_depth=2, shops=5)
RESULTS = Path(__file__).with_name("results") / "persisted-embedded.json"
USER_IDS = "{ users(first: 50) { edges { node { id } } } }"
SCREEN = """query UserScreen($id: ID!) {
  user(id: $id) {
    ...UserHeader
    defaultAddress {
      ...AddressCard
      __typename
    }
    addresses {
      ...AddressCard
      isDefault
      __typename
    }
    orders(first: 5) {
      edges {
        cursor
        node {
          ...OrderRow
          __typename
        }
        __typename
      }
      pageInfo {
        hasNextPage
        endCursor
        __typename
      }
      __typename
    }
    groups(first: 5) {
      edges {
        cursor
        node {
          ...GroupChip
          __typename
        }
        __typename
      }
      pageInfo {
        hasNextPage
        endCursor
        __typename
      }
      __typename
    }
    __typename
  }
}

fragment UserHeader on User {
  id
  name
  email
  createdAt
  version
  __typename
}

fragment AddressCard on Address {
  id
  label
  line1
  line2
  city
  postalCode
  country
  __typename
}

fragment GroupChip on Group {
  id
  name
  createdAt
  version
  __typename
}

fragment OrderRow on Order {
  id
  status
  totalCents
  currency
  createdAt
  items {
    sku
    name
    quantity
    unitPriceCents
    __typename
  }
  __typename
}
"""
DOCUMENTS = {"Q1": Q1, "SCREEN": SCREEN}


def _post(client: AsgiClient, body: dict[str, Any]) -> Send:
    return lambda: client.post("/graphql", json=body)


def _get(client: AsgiClient, params: dict[str, Any]) -> Send:
    encoded = urllib.parse.urlencode(
        {
            name: value if isinstance(value, str) else json.dumps(value)
            for name, value in params.items()
        }
    ).encode()
    return lambda: client.get("/graphql", encoded)


async def alternate(arms: dict[str, Send], rounds: int) -> dict[str, Any]:
    """Mean and median CPU time (µs) per request of each arm, one of each per round, in
    turns, and the ratios of the first arm's to the second's."""
    names = list(arms)
    taken: dict[str, list[float]] = {name: [] for name in names}
    for warm in range(20):
        await user_cpu(arms[names[warm % 2]])
    for round_ in range(rounds):
        for name in names if round_ % 2 == 0 else reversed(names):
            taken[name].append(await user_cpu(arms[name]))
    result: dict[str, Any] = {"rounds": rounds}
    for name in names:
        result[f"{name}_mean_us"] = round(statistics.fmean(taken[name]) * 1e6, 1)
        result[f"{name}_p50_us"] = round(statistics.median(taken[name]) * 1e6, 1)
    first, second = (taken[name] for name in names)
    result["ratio_p50"] = round(statistics.median(first) / statistics.median(second), 3)
    result["ratio_mean"] = round(statistics.fmean(first) / statistics.fmean(second), 3)
    return result


async def _executor(
    store: EmbeddedStore, data: Path, executor: Executor, rounds: int
) -> dict[str, Any]:
    client, as_written = clients(store, data, executor, TENANT)
    users = await client.post("/graphql", json={"query": USER_IDS})
    ids = [edge["node"]["id"] for edge in users.json()["data"]["users"]["edges"]]
    variables = {"id": ids[0]}
    found: dict[str, Any] = {}
    for label, document in DOCUMENTS.items():
        extensions = {"persistedQuery": {"version": 1, "sha256Hash": sha256(document)}}
        registering = {"query": document, "variables": variables, "extensions": extensions}
        await client.post("/graphql", json=registering)
        by_hash = {"variables": variables, "extensions": extensions}
        as_text = {"query": document, "variables": variables}
        for method, send in (("POST", _post), ("GET", _get)):
            found[f"{label} {method}, {executor}"] = await alternate(
                {"apq_hit": send(client, by_hash), "text": send(client, as_text)}, rounds
            )
        inlined = _inlined(document)
        # more texts than the document cache keeps: each is parsed and validated anew
        unseen = DOCUMENTS_KEPT + 100
        result = await interleave(
            {
                "apq_hit": _post(client, by_hash),
                "text": _post(client, as_text),
                "new_text_by_shape": cycling(
                    client, [{"query": inlined % user_id} for user_id in ids]
                ),
                "new_text_as_written": cycling(
                    as_written,
                    [
                        {"query": f"{document}# {n}\n", "variables": variables}
                        for n in range(unseen)
                    ],
                ),
            },
            rounds,
        )
        ratios(
            result,
            [
                ("apq_hit", "text"),
                ("apq_hit", "new_text_by_shape"),
                ("apq_hit", "new_text_as_written"),
            ],
        )
        found[f"{label} POST by text, {executor}"] = result
    return found


def _inlined(document: str) -> str:
    """The document with its id inlined (`%s` for it) instead of the variable $id."""
    head, _, rest = document.partition("(")
    _, _, body = rest.partition(")")
    return (head + body).replace("$id", '"%s"', 1)


async def run(rounds: int) -> dict[str, Any]:
    return await run_by_executor(SIZES, TENANT, _executor, rounds)


def main(argv: Sequence[str]) -> None:
    command_line("persisted", __doc__, run, RESULTS, argv)

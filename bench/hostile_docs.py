"""What hostile documents cost a worker: the time to answer each, and the longest the event
loop is held meanwhile.

The compiled API (`python -m server serve`'s app) runs in this process on the embedded store,
with the default limits and the server's garbage-collector settings; a tenant has one user,
whose id the documents ask for. Each document is sent `--repeats` times, each time as a new
text (a comment in front), to an app keeping no prepared document, so each is parsed and
validated anew; the median time is reported. A ticker task
sleeps a millisecond at a time meanwhile and records how late it wakes: the event loop's lag,
which is how long a request holds every other one (and /healthz) up.

`python -m bench hostile-docs` prints one JSON object and writes
bench/results/hostile_docs.json.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from bench import harness
from bench.asgi import AsgiClient
from bench.machine import machine_info
from bench.targets import compiled_app
from generated.table import TABLE
from keygraph.serve.document_cache import DocumentCache
from keygraph.serve.gc_tuning import tune_for_serving
from keygraph.stores.embedded.store import EmbeddedStore
from server.auth.tokens import issue_token
from server.settings import Limits, Settings

RESULTS = Path(__file__).with_name("results")
MIB = 1 << 20
TICK = 0.001
"""Seconds the ticker sleeps between wake-ups."""


@dataclass(frozen=True)
class Shape:
    """A hostile document: its text given the characters it may take, and its variables."""

    name: str
    build: Callable[[int], str]
    variables: Callable[[str], dict[str, Any]] = lambda user: {"u": user}
    by_document: bool = True
    """Whether it grows with the document (else with its variables): then it is sent again
    as long as a document may be."""


def doubling(levels: int, copies: int = 2, name: str = "F", last: str = "id") -> str:
    """`user(id: $u) { ...F0 }`, each fragment selecting `id` and spreading the next one
    `copies` times: `copies ** levels` expansions of the last."""
    spreads = " ".join([f"...{name}{{0}}"] * copies)
    fragments = [
        f"fragment {name}{i} on User {{ id {spreads.format(i + 1)} }}" for i in range(levels)
    ]
    fragments.append(f"fragment {name}{levels} on User {{ {last} }}")
    return "query($u: ID!) { user(id: $u) { ..." + name + "0 } }\n" + "\n".join(fragments)


def padded(text: str, size: int) -> str:
    """The text with commas (which GraphQL ignores) up to `size` bytes."""
    return text + "," * max(0, size - len(text.encode()))


def repeated(head: str, unit: str, tail: str, size: int) -> str:
    """`unit` as many times as `size` bytes hold between `head` and `tail`."""
    return head + unit * ((size - len(head) - len(tail)) // len(unit)) + tail


USER = "query($u: ID!) { user(id: $u) { "


def _user(rest: str) -> str:
    return USER + rest + " } }"


PAIRED = max(n for n in range(2, 1000) if n * (n - 1) <= Limits().max_pairs)
"""The most `node { id }` fields of one key the pair limit lets through (each pair is
counted at `node` and at `id`)."""


def _pairs(count: int, width: int) -> str:
    """`count` `node` fields under one key, each with a different `width`-byte id: the most
    pairs of fields the limit lets validation compare, with arguments as long as can be."""
    return "{ " + " ".join(f'node(id: "{i:0{width}d}") {{ id }}' for i in range(count)) + " }"


def _org(levels: int, objects: str, leaves: str = "id name depth version") -> str:
    """`orgRoots(first: 1)` and below it `levels` levels of OrgNode fragments, each selecting
    `leaves` and the next one under each of `objects` (comma-separated): no two fields
    merge."""
    fields = objects.split(", ")
    fragments = [
        f"fragment O{i} on OrgNode {{ {leaves} "
        + " ".join(f"{field} {{ ...O{i + 1} }}" for field in fields)
        + " }"
        for i in range(levels)
    ]
    fragments.append(f"fragment O{levels} on OrgNode {{ {leaves} }}")
    return "{ orgRoots(first: 1) { ...O0 } }\n" + "\n".join(fragments)


def _variables(size: int) -> str:
    """An operation declaring as many Int variables as `size` characters hold."""
    head, tail = "query(", ") { viewer { tenant } }"
    names: list[str] = []
    used = len(head) + len(tail)
    while used + len(f" $v{len(names)}: Int") <= size:
        names.append(f"$v{len(names)}: Int")
        used += len(names[-1]) + 1
    return head + " ".join(names) + tail


def _order_items(size: int) -> dict[str, Any]:
    item = {"sku": "s", "name": "n", "quantity": 1, "unitPriceCents": 1}
    count = size // (len(orjson.dumps(item)) + 1)
    return {"i": {"userId": "x", "currency": "EUR", "items": [item] * count}}


SHAPES = [
    Shape("doubling fragments, 1 KiB names", lambda s: doubling(199, name="F" * (s // 820))),
    Shape("doubling fragments, within the field limit", lambda s: padded(doubling(10), s)),
    Shape("fragment spread 8 times a level", lambda s: padded(doubling(40, copies=8), s)),
    Shape(
        "distinct fields, within the field limit",
        lambda s: padded(_org(8, "parent, children(first: 1)", "id depth version"), s),
        lambda user: {},
    ),
    Shape(
        "distinct fields, over the cost limit",
        lambda s: padded(_org(5, "parent, children(first: 1), ancestors"), s),
        lambda user: {},
    ),
    Shape("aliases", lambda s: repeated(USER, " a: id", " } }", s)),
    Shape("one selection set", lambda s: repeated(USER, " id", " } }", s)),
    Shape("pairs under one key, long arguments", lambda s: _pairs(PAIRED, s // PAIRED - 24)),
    Shape("a long string", lambda s: repeated('{ node(id: "', "x", '") { id } }', s)),
    Shape("a long field name", lambda s: repeated(USER, "x", " } }", s)),
    Shape("a long block string", lambda s: repeated('{ node(id: """', "x ", '""") { id } }', s)),
    Shape(
        "deep list literal",
        lambda s: padded("{ node(id: " + "[" * 190 + "1" + "]" * 190 + ") { id } }", s),
    ),
    Shape(
        "deep input object",
        lambda s: padded("{ node(id: " + "{a: " * 190 + "1" + "}" * 190 + ") { id } }", s),
    ),
    Shape(
        "deep inline fragments",
        lambda s: padded(_user("... on User { " * 190 + "id" + " }" * 190), s),
    ),
    Shape("many directives", lambda s: repeated(USER + "id", " @include(if: true)", " } }", s)),
    Shape(
        "many variables",
        _variables,
        lambda user: {},
    ),
    Shape(
        "1 MiB of input objects in variables",
        lambda s: "mutation($i: CreateOrderInput!) { createOrder(input: $i) { id } }",
        lambda user: _order_items(MIB - 512),
        by_document=False,
    ),
]
"""Documents as large as a body may be (1 MiB), in the shapes that make the most work."""


class Ticker:
    """Measures how late a task sleeping TICK at a time wakes up while it runs."""

    def __init__(self) -> None:
        self.lags: list[float] = []
        self._task: asyncio.Task[None] | None = None

    async def _run(self) -> None:
        loop = asyncio.get_running_loop()
        while True:
            before = loop.time()
            await asyncio.sleep(TICK)
            self.lags.append(loop.time() - before - TICK)

    def __enter__(self) -> Ticker:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def __exit__(self, *_exc: object) -> None:
        assert self._task is not None
        self._task.cancel()


def _texts(query: str, repeats: int) -> Iterator[str]:
    """The query as `repeats` different texts (a comment in front)."""
    for index in range(repeats):
        yield f"#{index:03d}\n{query}"


async def _measure(
    client: AsgiClient, query: str, variables: dict[str, Any], repeats: int
) -> dict[str, Any]:
    """The median seconds to answer, the most lag, the body's size and the outcome."""
    times: list[float] = []
    answer: Any = None
    with Ticker() as ticker:
        await asyncio.sleep(TICK * 2)
        for text in _texts(query, repeats):
            started = time.perf_counter()
            response = await client.post("/graphql", json={"query": text, "variables": variables})
            times.append(time.perf_counter() - started)
            answer = response
            await asyncio.sleep(TICK * 2)  # the ticker's lag for this request is in
    body = answer.json()
    errors = body.get("errors") or []
    codes = sorted({str(e.get("extensions", {}).get("code")) for e in errors})
    return {
        "bytes": len(orjson.dumps({"query": query, "variables": variables})),
        "median_ms": round(statistics.median(times) * 1000, 2),
        "max_ms": round(max(times) * 1000, 2),
        "max_lag_ms": round(max(ticker.lags) * 1000, 2),
        "status": answer.status_code,
        "answer": ",".join(codes) if codes else "data",
        "message": errors[0]["message"][:120] if errors else None,
    }


async def run(repeats: int) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as data:
        settings = Settings(data_dir=Path(data), jwt_secret="hostile-bench-" + "x" * 40)
        settings = settings.resolved()
        store = EmbeddedStore(TABLE, path=Path(data) / "keygraph.sqlite3")
        try:
            token = issue_token(settings, "acme", "bench", roles=["admin"])
            app = compiled_app(settings, store, documents=DocumentCache(0, 0))
            client = AsgiClient(app, {"Authorization": f"Bearer {token}"})
            tune_for_serving()  # as a served app's lifespan does (it does not run in-process)
            created = await client.post(
                "/graphql",
                json={
                    "query": 'mutation { createUser(input: {email: "a@b.c", name: "A"}) { id } }'
                },
            )
            user = created.json()["data"]["createUser"]["id"]
            found: dict[str, Any] = {
                "22 levels of doubling fragments": await _measure(
                    client, doubling(22), {"u": user}, repeats
                )
            }
            for shape in SHAPES:
                variables = shape.variables(user)
                room = MIB - 64 - len(orjson.dumps({"query": "", "variables": variables}))
                query = shape.build(room)
                size = len(orjson.dumps({"query": "#000\n" + query, "variables": variables}))
                if size > MIB:
                    raise ValueError(f"{shape.name}: {size} bytes, more than a body may hold")
                found[shape.name] = {"body": await _measure(client, query, variables, repeats)}
                if shape.by_document:
                    query = shape.build(settings.limits.max_document - len("#000\n"))
                    found[shape.name]["document"] = await _measure(
                        client, query, variables, repeats
                    )
        finally:
            await store.close()
    return found


def main(argv: Sequence[str] | None = None) -> None:
    parser = harness.parser("hostile-docs", __doc__)
    parser.add_argument("--repeats", type=int, default=5, help="requests per document")
    args = parser.parse_args(argv)
    result = {
        "machine": machine_info(),
        "repeats": args.repeats,
        "documents": asyncio.run(run(args.repeats)),
    }
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "hostile_docs.json").write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))

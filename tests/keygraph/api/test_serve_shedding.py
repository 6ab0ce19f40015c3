"""What a worker refuses before it reads a request (keygraph/serve/shedding.py): a GET whose
query string passes Served.max_query_string is 414, and a request past Served.max_in_flight
running at once is shed 503 OVERLOADED with Retry-After, not queued; a place comes back
when its request ends answered, failed or cut at its deadline. The repository's server
passes its settings (KEYGRAPH_MAX_IN_FLIGHT, KEYGRAPH_MAX_QUERY_STRING) through."""

from __future__ import annotations

import asyncio
from pathlib import Path

import httpx

from keygraph.store import Store
from server.compiled import compiled
from server.settings import load_settings
from tests.keygraph.api.conftest import bearer, post
from tests.keygraph.api.stalling import Stalling
from tests.keygraph.api.test_serve_deadlines import NAMES, repository, seeded  # noqa: F401
from tests.waiting import until


def _code(response: httpx.Response) -> str:
    (error,) = response.json()["errors"]
    return str(error["extensions"]["code"])


async def test_a_long_query_string_is_refused_414_and_the_same_query_posted_runs(
    seeded: Store,  # noqa: F811
) -> None:
    padded = NAMES + " " * 200
    async with repository(seeded, max_query_string=150) as client:
        long = await client.get("/graphql", params={"query": padded}, headers=bearer())
        assert long.status_code == 414
        assert _code(long) == "REQUEST_TOO_LARGE"
        posted = await post(client, {"query": padded}, **bearer())
        assert posted.status_code == 200
        assert posted.json()["data"]["users"]["edges"]
        short = await client.get("/graphql", params={"query": NAMES}, headers=bearer())
        assert short.status_code == 200


async def test_past_its_most_in_flight_a_request_is_shed_until_one_ends(
    seeded: Store,  # noqa: F811
) -> None:
    stalling = Stalling(seeded)
    stalling.before = lambda kind, _plan: kind == "Query"
    async with repository(stalling, max_in_flight=2, request_timeout=30) as client:
        held = [asyncio.create_task(post(client, {"query": NAMES}, **bearer())) for _ in "ab"]
        await until(lambda: stalling.stalled == 2, "two requests in flight")
        shed = await post(client, {"query": NAMES}, **bearer())
        assert shed.status_code == 503
        assert shed.headers["retry-after"] == "1"
        assert _code(shed) == "OVERLOADED"
        assert stalling.stalled == 2  # the shed one never reached the store
        held[0].cancel()  # a request that ends by failing gives its place back
        await asyncio.gather(held[0], return_exceptions=True)
        stalling.before = lambda _kind, _plan: False
        admitted = await post(client, {"query": NAMES}, **bearer())
        assert admitted.status_code == 200
        assert admitted.json()["data"]["users"]["edges"]
        held[1].cancel()
        await asyncio.gather(held[1], return_exceptions=True)


async def test_a_request_cut_at_its_deadline_gives_its_place_back(
    seeded: Store,  # noqa: F811
) -> None:
    stalling = Stalling(seeded)
    stalling.before = lambda kind, _plan: kind == "Query"
    async with repository(stalling, max_in_flight=1, request_timeout=0.2) as client:
        cut = await post(client, {"query": NAMES}, **bearer())
        assert cut.status_code == 504
        stalling.before = lambda _kind, _plan: False
        answered = await post(client, {"query": NAMES}, **bearer())
        assert answered.status_code == 200


async def test_the_server_passes_its_limits_through(tmp_path: Path, seeded: Store) -> None:  # noqa: F811
    environ = {"KEYGRAPH_MAX_IN_FLIGHT": "7", "KEYGRAPH_MAX_QUERY_STRING": "999"}
    environ |= {"KEYGRAPH_STREAM_COST": "300", "KEYGRAPH_PART_OBJECTS": "40"}
    environ |= {"KEYGRAPH_MAX_SUBSCRIPTIONS_PER_TENANT": "3"}
    settings = load_settings(environ, data_dir=str(tmp_path), jwt_secret="s" * 32)
    served = compiled(settings, seeded)
    assert (served.max_in_flight, served.max_query_string) == (7, 999)
    assert (served.stream_cost, served.part_objects) == (300, 40)
    assert served.subscriptions.max_subscriptions_per_tenant == 3

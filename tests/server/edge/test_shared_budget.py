"""Two app instances (two hosts) with KEYGRAPH_REDIS_URL hold a tenant to one budget between
them; with Redis killed each answers on its own budget, counting the fallbacks in /metrics;
once Redis is back they share again. Without the URL redis-py is never loaded."""

from __future__ import annotations

import asyncio
import contextlib
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path

import httpx

from generated.table import TABLE
from keygraph.shared.bucket import SharedBudget
from keygraph.stores.embedded.store import EmbeddedStore
from server.edge.app import create_app
from server.realtime.connection import Realtime
from server.settings import Limits, Settings
from tests.redis_server import RedisServer
from tests.server.observability.helpers import TOKEN, admin_token, scrape, settings_for, value
from tests.waiting import POLL, UNTIL_SECONDS

VIEWER = "query Viewer { viewer { tenant } }"
LIMITS = Limits(max_cost=5, tenant_budget=5, tenant_refill=0.001)
"""Five viewer queries (a point each) a tenant may send, refilled too slowly to matter."""


@contextlib.asynccontextmanager
async def host(settings: Settings) -> AsyncIterator[tuple[httpx.AsyncClient, SharedBudget]]:
    """A client of one app (lifespan run) on its own store, and the budget it charges."""
    store = EmbeddedStore(TABLE, path=settings.data_dir / "keygraph.sqlite3")
    app = create_app(settings, store)
    apps = [getattr(route, "app", None) for route in app.routes]
    (realtime,) = [endpoint for endpoint in apps if isinstance(endpoint, Realtime)]
    budget = realtime.budget
    assert isinstance(budget, SharedBudget)
    transport = httpx.ASGITransport(app=app)
    try:
        async with (
            app.router.lifespan_context(app),
            httpx.AsyncClient(transport=transport, base_url="http://keygraph.test") as client,
        ):
            yield client, budget
    finally:
        await store.close()


async def statuses(client: httpx.AsyncClient, token: str, count: int) -> list[int]:
    headers = {"Authorization": f"Bearer {token}"}
    answers = [
        await client.post("/graphql", json={"query": VIEWER}, headers=headers) for _ in range(count)
    ]
    return [answer.status_code for answer in answers]


async def test_two_hosts_share_a_budget_fall_back_without_redis_and_share_again(
    tmp_path: Path, redis_server: RedisServer
) -> None:
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    common = {"limits": LIMITS, "redis_url": redis_server.url, "metrics_token": TOKEN}
    settings_a = settings_for(tmp_path / "a", **common)
    settings_b = settings_for(tmp_path / "b", **common)
    token = admin_token(settings_a)
    async with host(settings_a) as (a, budget_a), host(settings_b) as (b, _):
        assert await statuses(a, token, 3) == [200] * 3
        assert await statuses(b, token, 3) == [200, 200, 429]  # five in all, not five each
        before = await scrape(a)
        assert value(before, "keygraph_redis_up") == 1
        redis_server.kill()
        assert await statuses(b, token, 6) == [200] * 5 + [429]  # b's own budget
        after = await scrape(a)
        fallbacks = "keygraph_shared_fallbacks_total"
        grew = value(after, fallbacks, what="budget") - value(before, fallbacks, what="budget")
        assert grew >= 6
        assert value(after, "keygraph_redis_up") == 0
        redis_server.start()  # empty: the tenant's bucket full again
        async with asyncio.timeout(UNTIL_SECONDS):
            while not budget_a.link.up:  # each probe tries Redis again
                await budget_a.admit("globex", 0)
                await asyncio.sleep(POLL)
        assert await statuses(a, token, 5) == [200] * 5
        assert await statuses(b, token, 1) == [429]  # shared again


def test_without_a_redis_url_redis_is_never_loaded(tmp_path: Path) -> None:
    program = (
        "import sys\n"
        "from pathlib import Path\n"
        "from generated.table import TABLE\n"
        "from keygraph.stores.embedded.store import EmbeddedStore\n"
        "from server.edge.app import create_app\n"
        "from server.settings import Settings\n"
        f"settings = Settings(env='dev', data_dir=Path({str(tmp_path)!r})).resolved()\n"
        "create_app(settings, EmbeddedStore(TABLE, path=settings.embedded_path))\n"
        "assert 'redis' not in sys.modules, 'redis was loaded'\n"
    )
    subprocess.run([sys.executable, "-c", program], check=True, cwd=Path(__file__).parents[3])

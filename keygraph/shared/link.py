"""The link to Redis that shared budgets and places go through. redis-py is imported only
when a link is made, so a server without a Redis URL never loads it.

A call that fails (Redis down, refused, too slow) marks the link down: that call and every
call until the next probe fall back to the host's own counts at once, without trying Redis.
One call each PROBE_EVERY seconds tries again; the first that succeeds marks the link up.
The link logs once when it goes down and once when it comes back, and reports each change
and each fallback to its hooks (the server's metrics)."""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from redis.asyncio import Redis
    from redis.commands.core import AsyncScript

T = TypeVar("T")
log = logging.getLogger("keygraph.shared")

TIMEOUT = 0.5
"""Seconds a Redis call (or connecting) may take before it counts as failed."""
PROBE_EVERY = 1.0
"""Seconds between two tries of a link that is down."""


def key_prefix(table: str) -> str:
    """What every key a server keeps in Redis for `table` starts with: the same in both
    servers, so they share a tenant's budget over one table."""
    return f"keygraph:{table}:"


class Link:
    """One Redis client, whether it answers, and what to do when it does not."""

    def __init__(
        self,
        url: str,
        *,
        fell_back: Callable[[str], None] = lambda _what: None,
        changed: Callable[[bool], None] = lambda _up: None,
        probe_every: float = PROBE_EVERY,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        from redis.asyncio import Redis
        from redis.asyncio.retry import Retry
        from redis.backoff import NoBackoff
        from redis.exceptions import RedisError

        # one retry at once: a pooled connection Redis closed (a restart) is replaced
        self.client: Redis = Redis.from_url(
            url,
            socket_timeout=TIMEOUT,
            socket_connect_timeout=TIMEOUT,
            retry=Retry(NoBackoff(), 1),
        )
        self.errors: tuple[type[BaseException], ...] = (RedisError, OSError)
        """What a failed call raises."""
        self._fell_back = fell_back
        self._changed = changed
        self._probe_every = probe_every
        self._clock = clock
        self.up = True
        self._next_probe = 0.0

    def script(self, source: str) -> AsyncScript:
        """A Lua script run atomically by EVALSHA (loaded again after a Redis restart)."""
        return self.client.register_script(source)

    async def attempt(self, call: Callable[[], Awaitable[T]], what: str) -> T | None:
        """What `call` gives, or None when Redis cannot give it: the caller falls back
        to its own count for `what` (counted)."""
        if not self.up:
            now = self._clock()
            if now < self._next_probe:
                self._fell_back(what)
                return None
            self._next_probe = now + self._probe_every  # this call is the probe
        try:
            result = await call()
        except self.errors as exc:
            self._down(exc)
            self._fell_back(what)
            return None
        if not self.up:
            self.up = True
            log.warning("redis answers again: budgets and places are shared across hosts")
            self._changed(True)
        return result

    def _down(self, exc: BaseException) -> None:
        self._next_probe = self._clock() + self._probe_every
        if self.up:
            self.up = False
            log.warning(
                "redis cannot be reached (%s): each host counts budgets and places on its own",
                exc,
            )
            self._changed(False)

    async def close(self) -> None:
        await self.client.aclose()


def number(reply: Any) -> float:
    """A number a Lua script returned as a string (Lua's numbers reach Redis as integers)."""
    return float(reply.decode() if isinstance(reply, bytes) else reply)

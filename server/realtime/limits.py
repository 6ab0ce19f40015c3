"""How many WebSocket connections a worker holds open, of those how many have yet to send
`connection_init`, and how many of the initialised ones one tenant holds (its subscriptions
are counted by the runtime's keygraph/serve/subscription_limits.py). With places shared
through Redis (keygraph/shared/places.py), a tenant's limit counts its places on every
host, and the worker's own count still holds it on the worker."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable

from keygraph.shared.places import SharedPlaces

CONNECTIONS = "connections"
"""The kind of the places an initialised connection takes, when shared."""


class ConnectionLimits:
    """The open WebSocket connections of one worker, and those of them awaiting
    `connection_init`, oldest first. A connection awaiting init can be closed to make room:
    a flood of connections that never init pushes out its own oldest, and a client that
    inits at once gets its place. Once initialised, a connection counts against its tenant's
    share (`per_tenant`), so one tenant cannot hold every place."""

    def __init__(
        self,
        max_open: int,
        max_awaiting_init: int,
        per_tenant: int,
        shared: SharedPlaces | None = None,
    ) -> None:
        self.max_open = max_open
        self.max_awaiting_init = max_awaiting_init
        self.per_tenant = per_tenant
        self.shared = shared
        self._open: set[object] = set()
        self._awaiting: dict[object, Callable[[], None]] = {}
        self._tenant_of: dict[object, str] = {}
        self._tenants: Counter[str] = Counter()

    @property
    def open(self) -> int:
        return len(self._open)

    @property
    def awaiting_init(self) -> int:
        return len(self._awaiting)

    def take(self, connection: object, evict: Callable[[], None]) -> bool:
        """Counts `connection` open and awaiting init, unless the worker holds its most
        connections, all initialised. The oldest awaiting init is evicted (its place freed
        now, `evict` called) when their limit, or the worker's, is reached."""
        full = len(self._open) >= self.max_open
        if self._awaiting and (full or len(self._awaiting) >= self.max_awaiting_init):
            oldest = next(iter(self._awaiting))
            self._open.discard(oldest)
            self._awaiting.pop(oldest)()
        elif full:
            return False
        self._open.add(connection)
        self._awaiting[connection] = evict
        return True

    def held_by(self, tenant: str) -> int:
        """The initialised connections of `tenant`."""
        return self._tenants[tenant]

    def initialised(self, connection: object) -> None:
        """The connection sent `connection_init`: it can no longer be evicted."""
        self._awaiting.pop(connection, None)

    async def admit(self, connection: object, tenant: str) -> bool:
        """Counts the open connection as `tenant`'s, unless the tenant holds its share."""
        if connection not in self._open or self._tenants[tenant] >= self.per_tenant:
            return False
        self._tenant_of[connection] = tenant
        self._tenants[tenant] += 1
        shared = self.shared
        if shared is not None and not await shared.take(CONNECTIONS, tenant, self.per_tenant):
            self._forget(connection)
            return False
        return True

    def release(self, connection: object) -> None:
        """The connection ended, however (a no-op once done, or once evicted)."""
        self._open.discard(connection)
        self._awaiting.pop(connection, None)
        tenant = self._forget(connection)
        if tenant is not None and self.shared is not None:
            self.shared.release(CONNECTIONS, tenant)

    def _forget(self, connection: object) -> str | None:
        """No longer counts the connection as its tenant's; that tenant, if any."""
        tenant = self._tenant_of.pop(connection, None)
        if tenant is not None:
            self._tenants[tenant] -= 1
            if not self._tenants[tenant]:
                del self._tenants[tenant]
        return tenant

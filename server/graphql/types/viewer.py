"""Who is asking: the tenant and subject of the verified token."""

from __future__ import annotations

import strawberry


@strawberry.type(description="The caller, as the verified token names it.")
class Viewer:
    tenant: str
    subject: str | None

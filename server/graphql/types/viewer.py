"""Who is asking: the tenant, subject and roles of the verified token."""

from __future__ import annotations

import strawberry


@strawberry.type(description="The caller, as the verified token names it.")
class Viewer:
    tenant: str
    subject: str | None
    roles: list[str] = strawberry.field(description="The caller's roles, sorted.")

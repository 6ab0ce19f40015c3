"""Who makes a request inside its tenant: the token's subject, roles and other claims, as
the generated guard functions (generated/authz.py) read them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

MAX_ROLES = 64
"""The most roles a caller holds; a token naming more is refused."""


@dataclass(frozen=True, slots=True)
class Caller:
    """The verified caller. `claims` holds the token's other string claims, which rules
    may compare (`claim.department = "sales"`)."""

    subject: str | None
    roles: frozenset[str]
    claims: Mapping[str, str] = field(default_factory=dict)

    def owns(self, value: object) -> bool:
        """Whether `value` (an owner attribute's value) is the caller's subject."""
        return self.subject is not None and value == self.subject

    def claim(self, name: str) -> str | None:
        return self.claims.get(name)

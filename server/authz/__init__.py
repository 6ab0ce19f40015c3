"""Authorization inside a tenant: the guards generated from the spec's access rules
(generated/authz.py), asked with the caller and the arguments before any store call. A
refused mutation is FORBIDDEN before it writes; a refused field is null with FORBIDDEN at
its path."""

from __future__ import annotations

from server.errors import Forbidden


def require(allowed: bool, action: str) -> None:
    """Raises FORBIDDEN unless `allowed` (a guard's answer); `action` says what was refused."""
    if not allowed:
        raise Forbidden(f"not allowed to {action}")

"""A WebSocket connection's authentication: the `connection_init` payload carries the same
bearer JWT as an HTTP request (`{"Authorization": "Bearer …"}`, as Apollo's and urql's
connectionParams send it), verified by the same Verifier (server/auth/tokens.py)."""

from __future__ import annotations

from typing import Any

import jwt

from server.auth.tokens import Claims, Verifier
from server.errors import Unauthenticated


def authenticate(verifier: Verifier, payload: Any) -> tuple[Claims, float]:
    """The claims of the init payload's token and when it expires (seconds since 1970);
    Unauthenticated when there is none or it is not valid."""
    header = None
    if isinstance(payload, dict):
        header = payload.get("Authorization", payload.get("authorization"))
    if not isinstance(header, str):
        raise Unauthenticated("connection_init must carry Authorization: 'Bearer <token>'")
    claims = verifier.verify_header(header)
    # verified above: its expiry is read without checking the signature a second time
    expires = jwt.decode(header.partition(" ")[2].strip(), options={"verify_signature": False})
    return claims, float(expires["exp"])

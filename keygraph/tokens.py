"""Bearer JWTs: the only place a request's tenant and caller come from.

Tokens are HS256 with a secret, or RS256 checked against a public key. A token must carry
`tenant` (a non-empty string) and `exp`; `sub` is optional (a string); the roles claim (its
name is the key's, `roles` by default) is a list of strings, or one string, and a token
without it has the default roles. Its other string claims are kept for rules that compare
them. `exp`, `iat` and `nbf` are JSON numbers of seconds (RFC 7519's NumericDate) before
the year 10000, never strings or booleans. Anything else is a TokenError saying why.
Needs PyJWT (`pip install 'keygraph[serve]'`).
"""

from __future__ import annotations

import os
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

import jwt

from .caller import MAX_ROLES, Caller
from .errors import KeygraphError

LEEWAY_SECONDS = 5
MAX_TENANT_LENGTH = 128
LATEST_TIME = 253402300799
"""The end of year 9999, the latest time a token may name (JSON numbers have any size)."""
_TIMES = ("exp", "iat", "nbf")
DEV_TENANT = "demo"
"""The tenant of the development token a GraphiQL page is prefilled with."""
_REGISTERED = frozenset({"tenant", "sub", "exp", "iat", "nbf", "iss", "aud", "jti"})


class TokenError(KeygraphError):
    """A token that names no caller: missing, malformed, forged or expired."""


@dataclass(frozen=True, slots=True)
class TokenKey:
    """What checks a token: the HS256 secret or RS256 public key, where its roles are, and
    the roles of a token that names none."""

    key: str
    algorithm: Literal["HS256", "RS256"] = "HS256"
    roles_claim: str = "roles"
    default_roles: frozenset[str] = field(default_factory=lambda: frozenset({"member"}))


@dataclass(frozen=True, slots=True)
class Verified:
    """A token's tenant and caller, and when it expires (epoch seconds)."""

    tenant: str
    caller: Caller
    expires: float


def verify(token: str, key: TokenKey) -> Verified:
    """The token's tenant and caller; TokenError when it names none."""
    try:
        payload = jwt.decode(
            token,
            key.key,
            algorithms=[key.algorithm],
            options={"require": ["exp", "tenant"]},
            leeway=LEEWAY_SECONDS,
        )
    except jwt.ExpiredSignatureError as exc:
        raise TokenError("the token has expired") from exc
    except jwt.InvalidTokenError as exc:
        raise TokenError("the token is not valid") from exc
    tenant = payload.get("tenant")
    if not isinstance(tenant, str) or not tenant or len(tenant) > MAX_TENANT_LENGTH:
        raise TokenError("the token's tenant claim must be a non-empty string")
    subject = payload.get("sub")
    if subject is not None and not isinstance(subject, str):
        raise TokenError("the token's sub claim must be a string")
    for name in _TIMES:
        if name in payload and not _numeric_date(payload[name]):
            raise TokenError(
                f"the token's {name} claim must be a number of seconds before the year 10000"
            )
    caller = Caller(subject, _roles(payload, key), _other_claims(payload, key.roles_claim))
    return Verified(tenant, caller, float(payload["exp"]))


VERIFIED_KEPT = 4096
"""Verified tokens a Verifier remembers, by default."""


C = TypeVar("C")


class Verifier(Generic[C]):
    """Checks tokens against a key, and remembers what each verified one gives (its
    `derive`) by its exact text until it expires: a client that reuses a token skips the
    signature check, and expiry is still checked on every use."""

    def __init__(
        self, key: TokenKey, derive: Callable[[Verified], C], size: int = VERIFIED_KEPT
    ) -> None:
        self.key = key
        self._derive = derive
        self._size = size
        self._verified: OrderedDict[str, tuple[C, float]] = OrderedDict()

    def verify(self, token: str) -> C:
        """What the token gives; TokenError when it names no caller."""
        cached = self._verified.get(token)
        if cached is not None:
            derived, expires = cached
            if time.time() <= expires + LEEWAY_SECONDS:
                self._verified.move_to_end(token)
                return derived
            del self._verified[token]
            raise TokenError("the token has expired")
        verified = verify(token, self.key)
        derived = self._derive(verified)
        self._verified[token] = (derived, verified.expires)
        if len(self._verified) > self._size:
            self._verified.popitem(last=False)
        return derived


def bearer(authorization: str | None) -> str:
    """The token of an `Authorization: Bearer <token>` header; TokenError for another."""
    if not authorization:
        raise TokenError("missing Authorization header")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise TokenError("the Authorization header must be 'Bearer <token>'")
    return token.strip()


def issue(
    secret: str,
    tenant: str,
    subject: str | None = None,
    ttl_seconds: int = 86400,
    roles: Sequence[str] | None = None,
    roles_claim: str = "roles",
) -> str:
    """A token signed with the HS256 secret; without `roles` it carries no roles claim, so
    the default roles apply."""
    if not tenant:
        raise ValueError("a token needs a non-empty tenant")
    now = int(time.time())
    payload: dict[str, object] = {"tenant": tenant, "iat": now, "exp": now + ttl_seconds}
    if subject is not None:
        payload["sub"] = subject
    if roles is not None:
        payload[roles_claim] = list(roles)
    return jwt.encode(payload, secret, algorithm="HS256")


def dev_secret(directory: Path) -> str:
    """The development HS256 secret kept in `directory` (dev-jwt-secret), created on first use."""
    path = directory / "dev-jwt-secret"
    if path.is_file():
        return path.read_text().strip()
    directory.mkdir(parents=True, exist_ok=True)
    secret = secrets.token_urlsafe(48)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(secret + "\n")
    return secret


def _roles(payload: dict[str, Any], key: TokenKey) -> frozenset[str]:
    if key.roles_claim not in payload:
        return key.default_roles
    roles = payload[key.roles_claim]
    if isinstance(roles, str):
        roles = [roles]
    if (
        not isinstance(roles, list)
        or len(roles) > MAX_ROLES
        or not all(isinstance(role, str) and role for role in roles)
    ):
        raise TokenError(f"the token's {key.roles_claim} claim must be a list of role names")
    return frozenset(roles)


def _other_claims(payload: dict[str, Any], roles_claim: str) -> dict[str, str]:
    """The string claims a rule may compare: all but the registered ones and the roles."""
    return {
        name: value
        for name, value in payload.items()
        if isinstance(value, str) and name not in _REGISTERED and name != roles_claim
    }


def _numeric_date(value: object) -> bool:
    """Whether a claim is a NumericDate one can compare: a number, not a bool, NaN or
    infinite, no further from 1970 than the end of year 9999."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return abs(value) <= LATEST_TIME

"""Bearer JWT verification: the only place a request's tenant comes from.

Tokens are HS256 with the configured secret, or RS256 checked against a public key file.
A token must carry `tenant` (a non-empty string) and `exp`; `sub` is optional (a string);
the roles claim (its name a setting, `roles` by default) is a list of strings, or one string,
and a token without it has the default roles (`member`). Its other string claims are kept for
rules that compare them.
`exp`, `iat` and `nbf` are JSON numbers of seconds (RFC 7519's NumericDate) before the year
10000, never strings or booleans.
Anything else (no header, another scheme, a bad signature, an expired or malformed token) is
Unauthenticated, which the app answers with HTTP 401.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import jwt

from keygraph.caller import MAX_ROLES, Caller
from server.authz.fields import unrestricted
from server.errors import Unauthenticated
from server.settings import Settings

_LEEWAY_SECONDS = 5
_MAX_TENANT_LENGTH = 128
_VERIFIED_CACHE_SIZE = 4096
_LATEST_TIME = 253402300799
"""The end of year 9999, the latest time a token may name (JSON numbers have any size)."""
_TIMES = ("exp", "iat", "nbf")
_REGISTERED = frozenset({"tenant", "sub", "exp", "iat", "nbf", "iss", "aud", "jti"})


@dataclass(frozen=True, slots=True)
class Claims:
    tenant: str
    caller: Caller
    unrestricted: bool = False
    """Whether the caller may read every field, whoever it belongs to (decided once per
    verified token: the cost estimate of such a caller is the same for all of them)."""

    @property
    def subject(self) -> str | None:
        return self.caller.subject


class Verifier:
    """Checks bearer tokens against the settings' key; built once per app."""

    def __init__(self, settings: Settings) -> None:
        self._algorithm = settings.jwt_algorithm
        self._roles_claim = settings.roles_claim
        self._default_roles = frozenset(settings.default_roles)
        if settings.jwt_public_key_file is not None:
            self._key: str = settings.jwt_public_key_file.read_text()
        elif settings.jwt_secret is not None:
            self._key = settings.jwt_secret
        else:
            raise ValueError("settings carry neither a JWT secret nor a public key")
        self._verified: OrderedDict[str, tuple[Claims, float]] = OrderedDict()

    def verify_header(self, authorization: str | None) -> Claims:
        if not authorization:
            raise Unauthenticated("missing Authorization header")
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise Unauthenticated("the Authorization header must be 'Bearer <token>'")
        return self.verify(token.strip())

    def verify(self, token: str) -> Claims:
        """The token's claims. A verified token is remembered (by its exact text) until it
        expires, so a client reusing it skips the signature check; expiry is still checked
        on every use."""
        cached = self._verified.get(token)
        if cached is not None:
            claims, expires = cached
            if time.time() <= expires + _LEEWAY_SECONDS:
                self._verified.move_to_end(token)
                return claims
            del self._verified[token]
            raise Unauthenticated("the token has expired")
        claims, expires = self._decode(token)
        self._verified[token] = (claims, expires)
        if len(self._verified) > _VERIFIED_CACHE_SIZE:
            self._verified.popitem(last=False)
        return claims

    def _decode(self, token: str) -> tuple[Claims, float]:
        try:
            payload = jwt.decode(
                token,
                self._key,
                algorithms=[self._algorithm],
                options={"require": ["exp", "tenant"]},
                leeway=_LEEWAY_SECONDS,
            )
        except jwt.ExpiredSignatureError as exc:
            raise Unauthenticated("the token has expired") from exc
        except jwt.InvalidTokenError as exc:
            raise Unauthenticated("the token is not valid") from exc
        tenant = payload.get("tenant")
        if not isinstance(tenant, str) or not tenant or len(tenant) > _MAX_TENANT_LENGTH:
            raise Unauthenticated("the token's tenant claim must be a non-empty string")
        subject = payload.get("sub")
        if subject is not None and not isinstance(subject, str):
            raise Unauthenticated("the token's sub claim must be a string")
        for name in _TIMES:
            if name in payload and not _numeric_date(payload[name]):
                raise Unauthenticated(
                    f"the token's {name} claim must be a number of seconds before the year 10000"
                )
        caller = Caller(subject, self._roles(payload), _other_claims(payload, self._roles_claim))
        claims = Claims(tenant=tenant, caller=caller, unrestricted=unrestricted(caller))
        return claims, float(payload["exp"])

    def _roles(self, payload: dict[str, Any]) -> frozenset[str]:
        if self._roles_claim not in payload:
            return self._default_roles
        roles = payload[self._roles_claim]
        if isinstance(roles, str):
            roles = [roles]
        if (
            not isinstance(roles, list)
            or len(roles) > MAX_ROLES
            or not all(isinstance(role, str) and role for role in roles)
        ):
            raise Unauthenticated(
                f"the token's {self._roles_claim} claim must be a list of role names"
            )
        return frozenset(roles)


def _other_claims(payload: dict[str, Any], roles_claim: str) -> dict[str, str]:
    """The string claims a rule may compare: all but the registered ones and the roles."""
    return {
        name: value
        for name, value in payload.items()
        if isinstance(value, str) and name not in _REGISTERED and name != roles_claim
    }


def _numeric_date(value: object) -> bool:
    """Whether a claim is a NumericDate the server can compare: a number, not a bool, NaN
    or infinite, no further from 1970 than the end of year 9999."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return False
    return abs(value) <= _LATEST_TIME


def issue_token(
    settings: Settings,
    tenant: str,
    subject: str | None = None,
    ttl_seconds: int = 86400,
    roles: Sequence[str] | None = None,
) -> str:
    """A dev token signed with the HS256 secret (RS256 tokens come from the key's owner);
    without `roles` it carries no roles claim, so the server's default roles apply."""
    if settings.jwt_secret is None:
        raise ValueError("issuing tokens needs the HS256 secret (KEYGRAPH_JWT_SECRET)")
    if not tenant:
        raise ValueError("a token needs a non-empty tenant")
    now = int(time.time())
    payload: dict[str, object] = {"tenant": tenant, "iat": now, "exp": now + ttl_seconds}
    if subject is not None:
        payload["sub"] = subject
    if roles is not None:
        payload[settings.roles_claim] = list(roles)
    return jwt.encode(payload, settings.jwt_secret, algorithm="HS256")

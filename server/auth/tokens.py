"""Bearer JWT verification with the server's settings: the only place a request's tenant
comes from. The rules of a token are keygraph.tokens' (HS256 with the configured secret, or
RS256 checked against a public key file; the roles claim and default roles are settings);
anything they refuse is Unauthenticated, which the app answers with HTTP 401. A verified
token is remembered until it expires."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from keygraph.caller import Caller
from keygraph.tokens import TokenError, TokenKey, Verified, bearer, issue
from keygraph.tokens import Verifier as TokenVerifier
from server.authz.fields import unrestricted
from server.errors import Unauthenticated
from server.settings import Settings


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


def token_key(settings: Settings) -> TokenKey:
    """What checks the settings' tokens: the HS256 secret or RS256 public key, the roles
    claim and the default roles."""
    if settings.jwt_public_key_file is not None:
        key = settings.jwt_public_key_file.read_text()
    elif settings.jwt_secret is not None:
        key = settings.jwt_secret
    else:
        raise ValueError("settings carry neither a JWT secret nor a public key")
    roles = frozenset(settings.default_roles)
    return TokenKey(key, settings.jwt_algorithm, settings.roles_claim, roles)


class Verifier:
    """Checks bearer tokens against the settings' key; built once per app."""

    def __init__(self, settings: Settings) -> None:
        self._tokens = TokenVerifier(token_key(settings), _claims)

    def verify_header(self, authorization: str | None) -> Claims:
        try:
            token = bearer(authorization)
        except TokenError as exc:
            raise Unauthenticated(str(exc)) from exc
        return self.verify(token)

    def verify(self, token: str) -> Claims:
        """The token's claims, remembered until it expires (keygraph.tokens.Verifier)."""
        try:
            return self._tokens.verify(token)
        except TokenError as exc:
            raise Unauthenticated(str(exc)) from exc


def _claims(verified: Verified) -> Claims:
    caller = verified.caller
    return Claims(tenant=verified.tenant, caller=caller, unrestricted=unrestricted(caller))


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
    return issue(settings.jwt_secret, tenant, subject, ttl_seconds, roles, settings.roles_claim)

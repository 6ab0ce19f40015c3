"""The server's tokens from its settings: the key the app checks bearer tokens with (the
only place a request's tenant comes from; keygraph.tokens' rules: HS256 with the configured
secret, or RS256 checked against a public key file, the roles claim and default roles as
set), and development tokens signed with the secret."""

from __future__ import annotations

from collections.abc import Sequence

from keygraph.tokens import TokenKey, issue
from server.settings import Settings


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

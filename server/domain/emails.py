"""How emails are compared: by the key of their claim, which ignores case and Unicode's
several spellings of one text, so that one email cannot be claimed twice in two forms."""

from __future__ import annotations

from annotated_types import MaxLen

from generated.models.email_claim import EmailClaim
from generated.models.user import User
from generated.queries.email_claim import get_email_claim
from keygraph.store import Session
from keygraph.writes.folds import casefolded
from server.errors import BadUserInput


def _key_max_length() -> int:
    """The spec's max_length of a claim's key: what a partition key holds at worst."""
    for constraint in EmailClaim.model_fields["email_key"].metadata:
        if isinstance(constraint, MaxLen):
            return constraint.max_length
    raise ValueError("EmailClaim.email_key has no max_length")


KEY_MAX_LENGTH = _key_max_length()
"""The most characters a claim's key takes; folding can make a key longer than its email
(ß becomes ss, İ two characters), so some emails short enough to keep are too long to claim."""


def email_key(email: str) -> str:
    """The claim key of an email (the user keeps the email as given); BAD_USER_INPUT naming
    `email` when the key is too long for any claim."""
    key = casefolded(email)
    if len(key) > KEY_MAX_LENGTH:
        raise BadUserInput(
            f"email is too long: {len(key):,} characters once case-folded, "
            f"at most {KEY_MAX_LENGTH:,}"
        )
    return key


async def held_key(s: Session, tenant: str, user: User) -> str:
    """The key of the claim `user` holds: its email's key or, for a user claimed before keys
    were folded (and whose email has not changed since), its email lower-cased."""
    key, lower = casefolded(user.email), user.email.lower()
    if key == lower:
        return key
    if len(key) > KEY_MAX_LENGTH:
        return lower
    claim = await get_email_claim(s, tenant, key, consistent=True)
    return key if claim is not None and claim.user_id == user.user_id else lower


async def claim_of_email(s: Session, tenant: str, email: str) -> EmailClaim | None:
    """The claim holding `email`: at its key or, for a claim made before keys were folded,
    at the email lower-cased."""
    key = email_key(email)
    claim = await get_email_claim(s, tenant, key, consistent=True)
    lower = email.lower()
    if claim is not None or lower == key or len(lower) > KEY_MAX_LENGTH:
        return claim
    return await get_email_claim(s, tenant, lower, consistent=True)

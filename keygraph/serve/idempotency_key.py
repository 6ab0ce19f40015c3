"""What names an Idempotency-Key's record, and what makes two requests under it the same.

A record is the whole caller's own: its name is a digest of the key with the tenant, the
token's `sub`, its roles and its other string claims (keygraph/caller.py `Caller`, all that
the authorization rules read). A caller that differs in any of them, an admin's token and a
member's with the same `sub`, or two tokens without `sub`, neither gets the other's answer
nor is refused as a reuse of the key: its request runs as its own. The same caller with a
fresh token (another `exp`, `iat` or `jti`, the same claims) retries under the same record.
"""

from __future__ import annotations

import hashlib
import json
import re

import orjson

from keygraph.caller import Caller

HEADER = "idempotency-key"
_VALID_KEY = re.compile(r"^[\x21-\x7e]{1,255}$")


def valid_key(key: str) -> bool:
    """1 to 255 printable ASCII characters, no spaces."""
    return bool(_VALID_KEY.match(key))


def record_name(tenant: str, caller: Caller, key: str) -> str:
    """The name of the record of `key` sent by `caller` of `tenant`: one per key and whole
    caller (tenant, `sub`, roles, claims)."""
    whole = [tenant, caller.subject, sorted(caller.roles), sorted(caller.claims.items()), key]
    # ASCII JSON: unambiguous, and any string a token's JSON holds encodes (lone surrogates too)
    return hashlib.sha256(json.dumps(whole, separators=(",", ":")).encode()).hexdigest()


def digest(body: bytes) -> str:
    """What makes two requests the same: their JSON (keys sorted), else their bytes."""
    try:
        canonical = orjson.dumps(orjson.loads(body), option=orjson.OPT_SORT_KEYS)
    except orjson.JSONDecodeError:
        canonical = body
    return hashlib.sha256(canonical).hexdigest()

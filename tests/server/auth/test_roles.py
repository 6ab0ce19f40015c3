"""The caller's roles: read from the roles claim (its name a setting), the default roles
when the token has none, refused when malformed; `viewer { roles }` shows them."""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest

from keygraph.serve import create_app
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.tokens import TokenError, Verified, Verifier
from server.auth.tokens import issue_token, token_key
from server.compiled import compiled
from server.settings import Settings, load_settings
from tests.server.conftest import SECRET

VIEWER = "{ viewer { tenant subject roles } }"


def _as_verified(verified: Verified) -> Verified:
    """What the app's verifier keeps of a token: the token's tenant and caller."""
    return verified


def _token(claims: dict[str, Any]) -> str:
    return jwt.encode({"exp": int(time.time()) + 600, **claims}, SECRET, algorithm="HS256")


@pytest.mark.parametrize(
    ("claims", "roles"),
    [
        ({"tenant": "acme", "sub": "ann", "roles": ["admin", "member"]}, ["admin", "member"]),
        ({"tenant": "acme", "sub": "ann"}, ["member"]),  # no claim: the default roles
        ({"tenant": "acme", "sub": "ann", "roles": []}, []),
        ({"tenant": "acme", "sub": "ann", "roles": "auditor"}, ["auditor"]),
    ],
    ids=["listed", "default", "none", "one-string"],
)
async def test_viewer_shows_the_roles_of_the_token(
    client: httpx.AsyncClient, claims: dict[str, Any], roles: list[str]
) -> None:
    headers = {"Authorization": f"Bearer {_token(claims)}"}
    response = await client.post("/graphql", json={"query": VIEWER}, headers=headers)
    assert response.json()["data"]["viewer"] == {
        "tenant": "acme",
        "subject": "ann",
        "roles": roles,
    }


@pytest.mark.parametrize(
    "roles",
    [7, [1], [""], {"admin": True}, ["r"] * 65],
    ids=["number", "list-of-numbers", "empty-name", "object", "too-many"],
)
def test_a_malformed_roles_claim_is_unauthenticated(settings: Settings, roles: object) -> None:
    with pytest.raises(TokenError, match="roles claim"):
        Verifier(token_key(settings), _as_verified).verify(
            _token({"tenant": "acme", "roles": roles})
        )


async def test_the_roles_claim_and_default_roles_are_settings(
    tmp_path: Path, store: EmbeddedStore
) -> None:
    environ = {
        "KEYGRAPH_ROLES_CLAIM": "cognito:groups",
        "KEYGRAPH_DEFAULT_ROLES": "reader, guest",
        "KEYGRAPH_JWT_SECRET": SECRET,
        "KEYGRAPH_DATA_DIR": str(tmp_path),
    }
    transport = httpx.ASGITransport(app=create_app(compiled(load_settings(environ), store)))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:

        async def roles(claims: dict[str, Any]) -> list[str]:
            headers = {"Authorization": f"Bearer {_token(claims)}"}
            response = await client.post("/graphql", json={"query": VIEWER}, headers=headers)
            found: list[str] = response.json()["data"]["viewer"]["roles"]
            return sorted(found)

        assert await roles({"tenant": "t", "cognito:groups": ["admin"]}) == ["admin"]
        assert await roles({"tenant": "t"}) == ["guest", "reader"]
        # the usual claim name means nothing under another setting
        assert await roles({"tenant": "t", "roles": ["admin"]}) == ["guest", "reader"]


def test_other_string_claims_are_kept_for_rules(settings: Settings) -> None:
    token = _token({"tenant": "t", "sub": "ann", "department": "sales", "level": 3})
    caller = Verifier(token_key(settings), _as_verified).verify(token).caller
    assert dict(caller.claims) == {"department": "sales"}
    assert caller.owns("ann")
    assert not caller.owns("bob")


def test_issued_tokens_carry_the_roles_asked_for(settings: Settings) -> None:
    claims = jwt.decode(
        issue_token(settings, "t", "ann", roles=["admin"]), SECRET, algorithms=["HS256"]
    )
    assert claims["roles"] == ["admin"]
    bare = jwt.decode(issue_token(settings, "t", "ann"), SECRET, algorithms=["HS256"])
    assert "roles" not in bare


async def test_the_graphiql_token_is_an_admin(tmp_path: Path, store: EmbeddedStore) -> None:
    settings = Settings(env="dev", data_dir=tmp_path, jwt_secret=SECRET).resolved()
    transport = httpx.ASGITransport(app=create_app(compiled(settings, store)))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        page = await client.get("/graphql", headers={"accept": "text/html"})
        found = re.search(r"Bearer ([\w-]+\.[\w-]+\.[\w-]+)", page.text)
        assert found is not None
        token = found.group(1)
        assert jwt.decode(token, SECRET, algorithms=["HS256"])["roles"] == ["admin"]

"""Authentication: only a verified bearer JWT with a tenant gets in; everything else is
UNAUTHENTICATED with HTTP 401."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from pathlib import Path
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from keygraph.serve import create_app
from keygraph.stores.embedded.store import EmbeddedStore
from keygraph.tokens import TokenError, Verified, Verifier
from server.auth.tokens import token_key
from server.compiled import compiled
from server.settings import Settings
from tests.server.conftest import SECRET

VIEWER = {"query": "{ viewer { tenant subject } }"}


def _as_verified(verified: Verified) -> Verified:
    """What the app's verifier keeps of a token: the token's tenant and caller."""
    return verified


def _token(claims: dict[str, Any], key: Any = SECRET, algorithm: str = "HS256") -> str:
    return jwt.encode(claims, key, algorithm=algorithm)


def _hmac_signed(claims: dict[str, Any], key: bytes) -> str:
    """An HS256 token built by hand, so any bytes (even a public key) can be the secret."""

    def b64(data: bytes) -> bytes:
        return base64.urlsafe_b64encode(data).rstrip(b"=")

    signing_input = b64(b'{"alg":"HS256","typ":"JWT"}') + b"." + b64(json.dumps(claims).encode())
    signature = hmac.new(key, signing_input, hashlib.sha256).digest()
    return (signing_input + b"." + b64(signature)).decode()


def _later() -> int:
    return int(time.time()) + 600


async def _post(client: httpx.AsyncClient, headers: dict[str, str]) -> httpx.Response:
    return await client.post("/graphql", json=VIEWER, headers=headers)


async def test_a_valid_token_names_tenant_and_subject(client: httpx.AsyncClient) -> None:
    token = _token({"tenant": "acme", "sub": "ann", "exp": _later()})
    response = await _post(client, {"Authorization": f"Bearer {token}"})
    assert response.status_code == 200
    assert response.json()["data"] == {"viewer": {"tenant": "acme", "subject": "ann"}}


@pytest.mark.parametrize(
    "authorization",
    [
        None,
        "",
        "Bearer",
        "Bearer ",
        "Basic dXNlcjpwYXNz",
        "Bearer not-a-jwt",
        "Bearer " + _token({"tenant": "acme", "exp": int(time.time()) - 60}),  # expired
        "Bearer " + _token({"tenant": "acme", "exp": _later()}, "another-secret-" + "y" * 40),
        "Bearer " + _token({"sub": "no tenant", "exp": _later()}),
        "Bearer " + _token({"tenant": "acme"}),  # no exp
        "Bearer " + _token({"tenant": "", "exp": _later()}),
        "Bearer " + _token({"tenant": ["acme"], "exp": _later()}),
        "Bearer " + _token({"tenant": "acme", "sub": 7, "exp": _later()}),
        "Bearer " + _token({"tenant": "acme", "exp": _later()}, None, "none"),
    ],
)
async def test_missing_expired_forged_or_incomplete_tokens_are_401(
    client: httpx.AsyncClient, authorization: str | None
) -> None:
    headers = {} if authorization is None else {"Authorization": authorization}
    response = await _post(client, headers)
    assert response.status_code == 401
    assert response.headers["www-authenticate"] == "Bearer"
    body = response.json()
    assert "data" not in body
    assert [e["extensions"]["code"] for e in body["errors"]] == ["UNAUTHENTICATED"]


async def test_401_speaks_the_graphql_response_media_type_when_asked(
    client: httpx.AsyncClient,
) -> None:
    response = await _post(client, {"Accept": "application/graphql-response+json"})
    assert response.status_code == 401
    assert response.headers["content-type"].startswith("application/graphql-response+json")


async def test_get_requests_need_a_token_too(client: httpx.AsyncClient) -> None:
    response = await client.get("/graphql", params={"query": "{ viewer { tenant } }"})
    assert response.status_code == 401


@pytest.fixture
def rsa_keys(tmp_path: Path) -> tuple[Any, Path]:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    public_file = tmp_path / "jwt.pub.pem"
    public_file.write_bytes(
        private.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
        )
    )
    return private, public_file


async def test_rs256_tokens_verify_against_the_public_key(
    tmp_path: Path, store: EmbeddedStore, rsa_keys: tuple[Any, Path]
) -> None:
    private, public_file = rsa_keys
    settings = Settings(
        data_dir=tmp_path, jwt_public_key_file=public_file, cursor_secret="c" * 32
    ).resolved()
    transport = httpx.ASGITransport(app=create_app(compiled(settings, store)))
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        good = _token({"tenant": "rsa", "exp": _later()}, private, "RS256")
        response = await _post(client, {"Authorization": f"Bearer {good}"})
        assert response.json()["data"]["viewer"]["tenant"] == "rsa"
        # an HS256 token "signed" with the public key must not pass (algorithm confusion)
        confused = _hmac_signed({"tenant": "rsa", "exp": _later()}, public_file.read_bytes())
        response = await _post(client, {"Authorization": f"Bearer {confused}"})
        assert response.status_code == 401


def test_verifier_refuses_an_hs256_token_when_configured_for_rs256(
    tmp_path: Path, rsa_keys: tuple[Any, Path]
) -> None:
    _, public_file = rsa_keys
    settings = Settings(
        data_dir=tmp_path, jwt_public_key_file=public_file, cursor_secret="c" * 32
    ).resolved()
    with pytest.raises(TokenError):
        Verifier(token_key(settings), _as_verified).verify(_token({"tenant": "x", "exp": _later()}))


def test_a_remembered_token_still_expires(
    settings: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    verifier = Verifier(token_key(settings), _as_verified)
    token = _token({"tenant": "acme", "sub": "ann", "exp": int(time.time()) + 60})
    assert verifier.verify(token).tenant == "acme"
    assert verifier.verify(token).caller.subject == "ann"  # from memory
    later = time.time() + 3600
    monkeypatch.setattr(time, "time", lambda: later)
    with pytest.raises(TokenError, match="expired"):
        verifier.verify(token)


def test_a_forged_token_is_never_remembered(settings: Settings) -> None:
    verifier = Verifier(token_key(settings), _as_verified)
    forged = _token({"tenant": "acme", "exp": _later()}, "another-secret-" + "y" * 40)
    for _ in range(2):
        with pytest.raises(TokenError, match="not valid"):
            verifier.verify(forged)

"""The command line: token, schema, seed (idempotent), table and backfill-groups, run
in-process."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import jwt
import pytest

from generated.keys import user as user_keys
from generated.queries.user import list_users
from generated.table import TABLE
from keygraph.cursor import CursorCodec
from keygraph.plan import Update
from keygraph.store import Session
from keygraph.stores.embedded.store import EmbeddedStore
from server.cli import main


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in list(os.environ):
        if name.startswith("KEYGRAPH_"):
            monkeypatch.delenv(name)


def test_token_is_signed_with_the_dev_secret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["token", "--tenant", "acme", "--sub", "ann", "--data", str(tmp_path)]) == 0
    token = capsys.readouterr().out.strip()
    secret = (tmp_path / "dev-jwt-secret").read_text().strip()
    claims = jwt.decode(token, secret, algorithms=["HS256"])
    assert (claims["tenant"], claims["sub"]) == ("acme", "ann")
    assert "roles" not in claims  # the server's default roles apply


def test_token_carries_each_role_given(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["token", "--tenant", "acme", "--role", "admin", "--role", "auditor"]
    assert main([*argv, "--data", str(tmp_path)]) == 0
    secret = (tmp_path / "dev-jwt-secret").read_text().strip()
    claims = jwt.decode(capsys.readouterr().out.strip(), secret, algorithms=["HS256"])
    assert claims["roles"] == ["admin", "auditor"]


def test_token_refuses_production_without_a_secret(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("KEYGRAPH_ENV", "production")
    assert main(["token", "--tenant", "acme", "--data", str(tmp_path)]) == 2
    assert "production mode needs" in capsys.readouterr().err


def test_seed_writes_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = ["seed", "--data", str(tmp_path), "--tenant", "t1", "--users", "3", "--orders", "4"]
    args += ["--groups", "1", "--org-nodes", "3", "--org-depth", "2", "--shops", "5"]
    args += ["--no-progress"]
    assert main(args) == 0
    assert "t1" in capsys.readouterr().out
    assert main(args) == 0
    assert "already holds" in capsys.readouterr().out

    async def users() -> int:
        store = EmbeddedStore(TABLE, path=tmp_path / "keygraph.sqlite3")
        try:
            session = Session(store, CursorCodec(b"k" * 32))
            return len((await list_users(session, "t1", first=100)).items)
        finally:
            await store.close()

    assert asyncio.run(users()) == 3


def test_table_commands_on_the_embedded_store(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["table", "describe", "--data", str(tmp_path)]) == 0
    described = json.loads(capsys.readouterr().out)
    assert sorted(described["indexes"]) == ["GSI1", "GSI2"]
    assert described["ttl_attribute"] == "expires_at"
    assert main(["table", "plan", "--data", str(tmp_path)]) == 0
    assert "nothing to do" in capsys.readouterr().out


def test_backfill_groups_gives_older_users_their_group_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["seed", "--data", str(tmp_path), "--tenant", "t1", "--users", "4", "--orders", "0"]
    args += ["--groups", "2", "--org-nodes", "0", "--shops", "0", "--no-progress"]
    assert main(args) == 0
    path = tmp_path / "keygraph.sqlite3"

    async def forget() -> list[list[str] | None]:
        store = EmbeddedStore(TABLE, path=path)
        try:
            page = await list_users(Session(store, CursorCodec(b"k" * 32)), "t1", first=100)
            for user in page.items:
                key = user_keys.key("t1", user.user_id)
                await store.update(Update(key=key, remove=("group_ids",)))
            return [user.group_ids for user in page.items]
        finally:
            await store.close()

    seeded = asyncio.run(forget())
    assert any(seeded)
    capsys.readouterr()
    assert main(["backfill-groups", "--data", str(tmp_path), "--no-progress"]) == 0
    assert "4 users read, 4 given their group ids" in capsys.readouterr().out
    assert asyncio.run(forget()) == seeded
    assert main(["backfill-groups", "--data", str(tmp_path), "--tenant", "t1"]) == 0
    assert "4 users read, 4 given" in capsys.readouterr().out  # forget() removed them again

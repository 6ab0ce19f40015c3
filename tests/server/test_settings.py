"""Settings: environment variables, the dev-mode secret kept in the data directory, dev mode
only when asked for or when no key is configured, and production mode refusing to start
without a key; each variable named in the docs, and each the docs name read by some code."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from server.settings import Limits, Settings, SettingsError, env_names, load_settings

ROOT = Path(__file__).parents[2]


def test_dev_mode_creates_a_secret_once_and_keeps_it(tmp_path: Path) -> None:
    first = load_settings({"KEYGRAPH_DATA_DIR": str(tmp_path)})
    again = load_settings({"KEYGRAPH_DATA_DIR": str(tmp_path)})
    assert first.jwt_secret is not None
    assert len(first.jwt_secret) >= 32
    assert again.jwt_secret == first.jwt_secret
    secret_file = tmp_path / "dev-jwt-secret"
    assert secret_file.read_text().strip() == first.jwt_secret
    assert secret_file.stat().st_mode & 0o077 == 0
    other = load_settings({"KEYGRAPH_DATA_DIR": str(tmp_path / "elsewhere")})
    assert other.jwt_secret != first.jwt_secret


def test_dev_mode_is_the_default_only_without_a_configured_key(tmp_path: Path) -> None:
    """An unset KEYGRAPH_ENV is dev mode (with the secret of the data directory) while no
    secret or public key is configured; with one it is production unless dev is asked for."""
    unset = load_settings({"KEYGRAPH_DATA_DIR": str(tmp_path)})
    assert (unset.env, unset.dev, unset.graphiql_enabled) == ("dev", True, True)
    secret = {"KEYGRAPH_DATA_DIR": str(tmp_path / "s"), "KEYGRAPH_JWT_SECRET": "s" * 40}
    configured = load_settings(secret)
    assert configured.env == "production"
    assert not configured.dev
    assert not configured.graphiql_enabled
    assert not (tmp_path / "s" / "dev-jwt-secret").exists()
    asked = load_settings({**secret, "KEYGRAPH_ENV": "dev"})
    assert (asked.env, asked.dev, asked.jwt_secret) == ("dev", True, "s" * 40)
    key = tmp_path / "key.pem"
    key.write_text("-----BEGIN PUBLIC KEY-----\n")
    public = {"KEYGRAPH_JWT_PUBLIC_KEY_FILE": str(key), "KEYGRAPH_CURSOR_SECRET": "c" * 32}
    assert not load_settings(public).dev
    assert load_settings({**public, "KEYGRAPH_ENV": "dev"}).dev
    assert configured.resolved() == configured


def test_production_refuses_to_start_without_a_key(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="production mode needs"):
        load_settings({"KEYGRAPH_ENV": "production", "KEYGRAPH_DATA_DIR": str(tmp_path)})
    assert not (tmp_path / "dev-jwt-secret").exists()


def test_production_with_a_secret_turns_graphiql_off(tmp_path: Path) -> None:
    settings = load_settings({"KEYGRAPH_ENV": "production", "KEYGRAPH_JWT_SECRET": "s" * 40})
    assert not settings.dev
    assert not settings.graphiql_enabled
    enabled = load_settings(
        {"KEYGRAPH_ENV": "production", "KEYGRAPH_JWT_SECRET": "s" * 40, "KEYGRAPH_GRAPHIQL": "1"}
    )
    assert enabled.graphiql_enabled


def test_environment_variables_and_overrides(tmp_path: Path) -> None:
    env = {
        "KEYGRAPH_DATA_DIR": str(tmp_path),
        "KEYGRAPH_STORE": "dynamodb",
        "KEYGRAPH_TABLE": "kg_prod",
        "KEYGRAPH_PORT": "9000",
        "KEYGRAPH_MAX_DEPTH": "7",
        "KEYGRAPH_DYNAMODB_IDLE_TIMEOUT": "2.5",
        "KEYGRAPH_KEEP_ALIVE": "90",
        "KEYGRAPH_MAX_DOCUMENT": "4096",
        "KEYGRAPH_MAX_FIELDS": "300",
        "KEYGRAPH_MAX_PAIRS": "20",
        "KEYGRAPH_MAX_VARIABLE_VALUES": "60",
        "KEYGRAPH_GC_YOUNG_THRESHOLD": "5000",
    }
    settings = load_settings(env, port=9100)
    assert settings.dynamodb_idle_timeout == 2.5
    assert settings.gc_young_threshold == 5000
    assert settings.keep_alive == 90
    assert (settings.store, settings.table, settings.port) == ("dynamodb", "kg_prod", 9100)
    assert settings.limits == Limits(
        max_depth=7,
        max_document=4096,
        max_fields=300,
        max_pairs=20,
        max_variable_values=60,
    )
    assert settings.data_dir == tmp_path


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("KEYGRAPH_ENV", "staging"),
        ("KEYGRAPH_STORE", "postgres"),
        ("KEYGRAPH_PORT", "eighty"),
        ("KEYGRAPH_MAX_DEPTH", "0"),
        ("KEYGRAPH_DYNAMODB_IDLE_TIMEOUT", "-1"),
        ("KEYGRAPH_KEEP_ALIVE", "0"),
        ("KEYGRAPH_GC_YOUNG_THRESHOLD", "0"),
        ("KEYGRAPH_GC_YOUNG_THRESHOLD", "often"),
        ("KEYGRAPH_GRAPHIQL", "maybe"),
        ("KEYGRAPH_JWT_SECRET", "too-short"),
        ("KEYGRAPH_JWT_PUBLIC_KEY_FILE", "/nonexistent/key.pem"),
    ],
)
def test_bad_settings_are_refused_with_a_reason(tmp_path: Path, name: str, value: str) -> None:
    with pytest.raises(SettingsError):
        load_settings({"KEYGRAPH_DATA_DIR": str(tmp_path), name: value})


def test_an_rs256_key_needs_a_cursor_secret(tmp_path: Path) -> None:
    key = tmp_path / "key.pem"
    key.write_text("-----BEGIN PUBLIC KEY-----\n")
    with pytest.raises(SettingsError, match="CURSOR_SECRET"):
        load_settings({"KEYGRAPH_JWT_PUBLIC_KEY_FILE": str(key)})
    settings = load_settings(
        {"KEYGRAPH_JWT_PUBLIC_KEY_FILE": str(key), "KEYGRAPH_CURSOR_SECRET": "c" * 32}
    )
    assert settings.jwt_algorithm == "RS256"
    assert settings.cursor_key() == b"c" * 32


def test_the_cursor_key_follows_the_jwt_secret(tmp_path: Path) -> None:
    one = load_settings({"KEYGRAPH_JWT_SECRET": "a" * 40})
    two = load_settings({"KEYGRAPH_JWT_SECRET": "b" * 40})
    assert one.cursor_key() != two.cursor_key()
    assert one.cursor_key() != b"a" * 40  # derived, not the signing secret itself


def test_the_docs_name_every_variable_and_only_those_read() -> None:
    """Each setting's KEYGRAPH_ variable is in the docs; a variable the docs name that is no
    setting's (`KEYGRAPH_MAX_WS_*` names several) is read by the code or the tests."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    named = {v for page in pages for v in re.findall(r"KEYGRAPH_\w*[A-Z0-9]", page.read_text())}
    settings = {*env_names(Settings), *env_names(Limits)}
    assert sorted(settings - named) == []
    code = "".join(
        path.read_text()
        for folder in ("keygraph", "server", "codegen", "tests")
        for path in (ROOT / folder).rglob("*.py")
    )
    others = {v for v in named - settings if not any(s.startswith(f"{v}_") for s in settings)}
    assert sorted(v for v in others if f'"{v}"' not in code) == []


def test_the_document_cache_bounds_are_settings() -> None:
    """What `serve` keeps of prepared documents (server/compiled.py's DocumentCache)."""
    loaded = load_settings(
        {"KEYGRAPH_DOCUMENT_CACHE_ENTRIES": "7", "KEYGRAPH_DOCUMENT_CACHE_CHARS": "900"},
        jwt_secret="s" * 40,
    )
    assert (loaded.limits.document_cache_entries, loaded.limits.document_cache_chars) == (7, 900)
    assert Limits().document_cache_chars > 0

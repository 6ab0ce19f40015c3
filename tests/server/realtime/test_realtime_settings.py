"""The realtime settings `serve` gives the compiled API (server/compiled.py), from the
environment, and refused when not positive numbers."""

from __future__ import annotations

from pathlib import Path

import pytest

from server.settings import SettingsError, load_settings


def test_realtime_settings_come_from_the_environment(tmp_path: Path) -> None:
    settings = load_settings(
        {
            "KEYGRAPH_DATA_DIR": str(tmp_path),
            "KEYGRAPH_WS_INIT_TIMEOUT": "2.5",
            "KEYGRAPH_MAX_SUBSCRIPTIONS_PER_CONNECTION": "4",
            "KEYGRAPH_MAX_SUBSCRIPTIONS_PER_TENANT": "40",
            "KEYGRAPH_MAX_SUBSCRIPTIONS_PER_WORKER": "400",
            "KEYGRAPH_MAX_WS_CONNECTIONS_PER_TENANT": "50",
            "KEYGRAPH_STREAM_POLL_INTERVAL": "0.05",
        }
    )
    assert settings.ws_init_timeout == 2.5
    assert settings.max_subscriptions_per_connection == 4
    assert settings.max_subscriptions_per_tenant == 40
    assert settings.max_subscriptions_per_worker == 400
    assert settings.max_ws_connections_per_tenant == 50
    assert settings.stream_poll_interval == 0.05


@pytest.mark.parametrize(
    ("variable", "value"),
    [
        ("KEYGRAPH_WS_INIT_TIMEOUT", "0"),
        ("KEYGRAPH_MAX_SUBSCRIPTIONS_PER_TENANT", "many"),
        ("KEYGRAPH_MAX_WS_CONNECTIONS_PER_TENANT", "0"),
    ],
)
def test_a_realtime_setting_must_be_a_positive_number(
    tmp_path: Path, variable: str, value: str
) -> None:
    with pytest.raises(SettingsError):
        load_settings({"KEYGRAPH_DATA_DIR": str(tmp_path), variable: value})


def test_the_poll_interval_defaults_by_store(tmp_path: Path) -> None:
    embedded = load_settings({"KEYGRAPH_DATA_DIR": str(tmp_path)})
    dynamodb = load_settings({"KEYGRAPH_DATA_DIR": str(tmp_path), "KEYGRAPH_STORE": "dynamodb"})
    assert (embedded.poll_interval, dynamodb.poll_interval) == (0.01, 0.25)

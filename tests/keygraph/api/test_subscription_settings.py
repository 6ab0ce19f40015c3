"""The subscriptions a tenant and a worker hold, read alike by `keygraph serve` and `python
-m server serve` from the same variables (keygraph/serve/subscription_settings.py), `keygraph
serve`'s flags over them, and values that cannot work refused."""

from __future__ import annotations

from pathlib import Path

import pytest

from codegen.cli import main, parser
from keygraph.serve import cli as serve_cli
from keygraph.serve.subscription_settings import SubscriptionSettings, subscription_settings
from server.settings import SettingsError, load_settings

TENANT, WORKER = "KEYGRAPH_MAX_SUBSCRIPTIONS_PER_TENANT", "KEYGRAPH_MAX_SUBSCRIPTIONS_PER_WORKER"


def test_both_commands_read_the_subscription_limits_alike(tmp_path: Path) -> None:
    assert subscription_settings({}) == SubscriptionSettings()
    assert subscription_settings({TENANT: ""}) == SubscriptionSettings()
    given = {"KEYGRAPH_DATA_DIR": str(tmp_path), TENANT: "7", WORKER: "70"}
    assert subscription_settings(given) == SubscriptionSettings(7, 70)
    loaded = load_settings(given)
    assert (loaded.max_subscriptions_per_tenant, loaded.max_subscriptions_per_worker) == (7, 70)
    assert isinstance(loaded, SubscriptionSettings)
    with pytest.raises(SettingsError, match="max_subscriptions_per_tenant must be positive"):
        load_settings({**given, TENANT: "0"})


def test_keygraph_serve_takes_its_flags_over_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    argv = ["serve", "--package", "generated", "--db", str(tmp_path / "k.sqlite3")]
    monkeypatch.setenv(TENANT, "7")
    monkeypatch.setenv(WORKER, "70")
    options = serve_cli._options(parser().parse_args(argv))
    assert options["subscriptions"] == SubscriptionSettings(7, 70)
    flagged = [*argv, "--max-subscriptions-per-worker", "9"]
    options = serve_cli._options(parser().parse_args(flagged))
    assert options["subscriptions"] == SubscriptionSettings(7, 9)


@pytest.mark.parametrize(
    ("flags", "environ", "said"),
    [
        (["--max-subscriptions-per-tenant", "0"], {}, f"{TENANT} must be at least 1, not 0"),
        ([], {WORKER: "-2"}, f"{WORKER} must be at least 1, not -2"),
        ([], {TENANT: "many"}, f"{TENANT} must be a whole number, not 'many'"),
    ],
)
def test_subscription_limits_that_cannot_work_are_refused(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    flags: list[str],
    environ: dict[str, str],
    said: str,
) -> None:
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    argv = ["serve", "--package", "generated", "--db", str(tmp_path / "k.sqlite3"), *flags]
    assert main(argv) == 2
    assert said in capsys.readouterr().err

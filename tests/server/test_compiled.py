"""The compiled API as `serve` builds it from the settings (server/compiled.py): redis-py is
never loaded without a Redis URL, and the settings refuse a tenant budget that cannot pay
for the costliest operation."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from server.settings import SettingsError, load_settings

ROOT = Path(__file__).parents[2]


def test_without_a_redis_url_redis_is_never_loaded(tmp_path: Path) -> None:
    program = (
        "import sys\n"
        "from pathlib import Path\n"
        "from generated.table import TABLE\n"
        "from keygraph.serve import create_app\n"
        "from keygraph.stores.embedded.store import EmbeddedStore\n"
        "from server.compiled import compiled\n"
        "from server.settings import Settings\n"
        f"settings = Settings(env='dev', data_dir=Path({str(tmp_path)!r})).resolved()\n"
        "assert settings.redis_url is None\n"
        "store = EmbeddedStore(TABLE, path=settings.embedded_path)\n"
        "create_app(compiled(settings, store))\n"
        "assert 'redis' not in sys.modules, 'redis was loaded'\n"
        "assert 'keygraph.shared.bucket' not in sys.modules, 'the shared budget was loaded'\n"
    )
    subprocess.run([sys.executable, "-c", program], check=True, cwd=ROOT)


def test_the_budget_must_hold_the_costliest_operation() -> None:
    with pytest.raises(SettingsError):
        load_settings({"KEYGRAPH_MAX_COST": "500", "KEYGRAPH_TENANT_BUDGET": "100"})

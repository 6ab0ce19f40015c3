"""keygraph as another project installs it: the wheel built from this checkout, installed in a
fresh virtual environment outside the repository, gives the `keygraph` command and the
runtime, without the test doubles (testkit/). A spec in a temporary directory is linted,
generated and checked there, its table planned, and the library example of docs/library.md
runs on both stores and is served, GraphiQL's assets with it.

Offline and quick: the wheel is built with the dev environment's setuptools (no build
isolation) and installed without its dependencies, which the new environment then reads
from the dev environment's site-packages through a .pth file."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from keygraph.stores.dynamodb import admin
from keygraph.stores.dynamodb.local import DynamoDBLocal, free_port
from tests.waiting import answering

ROOT = Path(__file__).parents[1]
SPEC = ROOT / "tests" / "codegen" / "cases" / "webshop" / "spec.toml"
SOURCES = ("pyproject.toml", "README.md", "codegen", "keygraph")
HTML = {"Accept": "text/html"}


@dataclass(frozen=True)
class Installed:
    """A fresh environment with the wheel installed, and a project directory holding a spec
    and the package `keygraph generate` wrote from it."""

    bin: Path
    project: Path

    def run(self, *argv: str | Path, **env: str) -> subprocess.CompletedProcess[str]:
        clean = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PYTHON"))}
        return subprocess.run(
            [str(arg) for arg in argv],
            cwd=self.project,
            env={**clean, **env},
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )

    def keygraph(self, *argv: str | Path, **env: str) -> subprocess.CompletedProcess[str]:
        return self.run(self.bin / "keygraph", *argv, **env)


def _ok(done: subprocess.CompletedProcess[str]) -> str:
    assert done.returncode == 0, f"{done.args} exited {done.returncode}:\n{done.stderr}"
    return done.stdout


def _call(*argv: str | Path) -> str:
    """Run a command of the dev environment; its output."""
    args = [str(arg) for arg in argv]
    return _ok(subprocess.run(args, capture_output=True, text=True, check=False))


def _build_wheel(work: Path) -> Path:
    """The wheel of a copy of the sources it is built from (nothing else of the checkout)."""
    source = work / "source"
    source.mkdir()
    for name in SOURCES:
        if (ROOT / name).is_dir():
            shutil.copytree(
                ROOT / name, source / name, ignore=shutil.ignore_patterns("__pycache__")
            )
        else:
            shutil.copy2(ROOT / name, source / name)
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--no-input"]
    flags = ["--no-deps", "--no-build-isolation", "--no-index", "--quiet"]
    _call(*pip, "wheel", *flags, "-w", work / "dist", source)
    (wheel,) = (work / "dist").glob("keygraph-*.whl")
    return wheel


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    work = tmp_path_factory.mktemp("wheel")
    wheel = _build_wheel(work)
    venv = work / "venv"
    _call(sys.executable, "-m", "venv", "--without-pip", venv)
    python = venv / "bin" / "python"
    pip = [sys.executable, "-m", "pip", "--disable-pip-version-check", "--python", str(python)]
    _call(*pip, "install", "--no-deps", "--no-index", "--quiet", wheel)
    # Only now the dependencies (the dev environment's), so pip never saw them as installed.
    site = subprocess.run(
        [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    (Path(site) / "keygraph-test-dependencies.pth").write_text(sysconfig.get_path("purelib") + "\n")
    project = work / "project"
    project.mkdir()
    shutil.copy2(SPEC, project / "spec.toml")
    return Installed(venv / "bin", project)


def test_the_wheel_holds_the_runtime_and_the_compiler_only(installed: Installed) -> None:
    python = installed.bin / "python"
    where = _ok(
        installed.run(
            python,
            "-c",
            "import codegen, keygraph; print(keygraph.__file__); print(codegen.__file__)",
        )
    )
    assert all(line.startswith(str(installed.bin.parent)) for line in where.split()), where
    for app in ("server", "generated", "testkit"):
        done = installed.run(python, "-c", f"import {app}")
        assert "ModuleNotFoundError" in done.stderr, app


def test_the_wheel_holds_no_test_doubles(installed: Installed) -> None:
    listing = "from importlib.metadata import files; print(*files('keygraph'), sep='\\n')"
    shipped = _ok(installed.run(installed.bin / "python", "-c", listing)).split()
    assert any(name.startswith("keygraph/stores/") for name in shipped)
    doubles = [
        name
        for name in shipped
        if name.startswith(("testkit/", "tests/")) or Path(name).stem in ("faults", "testing")
    ]
    assert doubles == []


def test_keygraph_compiles_a_spec_outside_the_repository(installed: Installed) -> None:
    assert "spec.toml: ok" in _ok(installed.keygraph("lint", "--spec", "spec.toml"))
    _ok(installed.keygraph("generate", "--spec", "spec.toml", "--out", "webshop"))
    assert "up to date" in _ok(
        installed.keygraph("check", "--spec", "spec.toml", "--out", "webshop")
    )
    sheet = (installed.project / "webshop" / "ACCESS_PATTERNS.md").read_text()
    assert "from\nwebshop.queries import <pattern>" in sheet
    (installed.project / "webshop" / "table.py").write_text("TABLE = None\n")
    stale = installed.keygraph("check", "--spec", "spec.toml", "--out", "webshop")
    assert stale.returncode == 1
    assert "table.py" in stale.stdout
    _ok(installed.keygraph("generate", "--spec", "spec.toml", "--out", "webshop"))


def _library_example(project: Path, store: str) -> str:
    text = (ROOT / "docs" / "library.md").read_text()
    section = text.split("## One runtime, any spec", 1)[1].split("\n## ", 1)[0]
    program = re.search(r"```python\n(.*?)```", section, re.S)
    assert program is not None
    code = program.group(1).replace("/tmp/shop", str(project))
    embedded = re.search(r"EmbeddedStore\(TABLE, path=[^)]*\)", code)
    assert embedded is not None
    code = code.replace(embedded.group(0), store)
    return code.replace(
        "import EmbeddedStore, admin_of", "import DynamoDBStore, EmbeddedStore, admin_of"
    )


@pytest.mark.parametrize(
    "kind", ["embedded", pytest.param("dynamodb-local", marks=pytest.mark.dynamodb_local)]
)
def test_the_library_example_runs_on_the_installed_package(
    installed: Installed, kind: str, request: pytest.FixtureRequest
) -> None:
    _ok(installed.keygraph("generate", "--spec", "spec.toml", "--out", "webshop"))
    if kind == "embedded":
        store = f'EmbeddedStore(TABLE, path="{installed.project}/shop.sqlite3")'
        table_flags: list[str] = ["--path", "shop.sqlite3"]
    else:
        local: DynamoDBLocal = request.getfixturevalue("dynamodb_local")
        store = f'DynamoDBStore(TABLE, endpoint_url="{local.endpoint_url}")'
        table_flags = ["--store", "dynamodb", "--endpoint-url", local.endpoint_url]
    script = installed.project / f"example_{kind}.py"
    script.write_text(_library_example(installed.project, store))
    client: Any = request.getfixturevalue("dynamodb_client") if kind != "embedded" else None
    try:
        lines = _ok(installed.run(installed.bin / "python", script)).splitlines()
        assert lines[0].startswith("sku='TEA' title='Green tea'")
        assert lines[1].startswith("[Product(sku='TEA'")
        assert lines[2].startswith("[Order(customer_id='c1', order_id='O1'")
        assert lines[2].count("OrderItem(") == 2
        assert lines[3].startswith("[OrderByStatusSummary(customer_id='c1', order_id='O1'")
        plan = _ok(installed.keygraph("table", "plan", "--package", "webshop", *table_flags))
        assert "nothing to do" in plan
    finally:
        if client is not None and admin.describe(client, "webshop"):
            admin.delete_table(client, "webshop")


def _answer(port: int, token: str, query: str) -> Any:
    request = urllib.request.Request(
        f"http://127.0.0.1:{port}/graphql",
        data=json.dumps({"query": query}).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def test_keygraph_serves_what_the_library_wrote(installed: Installed) -> None:
    _ok(installed.keygraph("generate", "--spec", "spec.toml", "--out", "webshop"))
    script = installed.project / "example_served.py"
    store = f'EmbeddedStore(TABLE, path="{installed.project}/served.sqlite3")'
    script.write_text(_library_example(installed.project, store))
    _ok(installed.run(installed.bin / "python", script))
    secret = {"KEYGRAPH_JWT_SECRET": "wheel-serve-secret-" + "s" * 32}
    token = _ok(installed.keygraph("token", "--tenant", "acme", "--role", "admin", **secret))
    port = free_port()
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PYTHON"))}
    command = [str(installed.bin / "keygraph"), "serve", "--package", "webshop"]
    command += ["--db", "served.sqlite3", "--port", str(port)]
    process = subprocess.Popen(command, cwd=installed.project, env={**clean, **secret})
    try:
        answering(f"http://127.0.0.1:{port}/healthz", lambda: process.poll() is None)
        query = '{ product(sku: "TEA") { title } ordersByStatus(status: PAID) '
        query += "{ edges { node { orderId } } } }"
        answer = _answer(port, token.strip(), query)
        assert answer["data"] == {
            "product": {"title": "Green tea"},
            "ordersByStatus": {"edges": [{"node": {"orderId": "O1"}}]},
        }
        assert answer["extensions"]["cost"]["actual"]["storeCalls"] == 2
        assert "errors" not in answer
        page = urllib.request.Request(f"http://127.0.0.1:{port}/graphql", headers=HTML)
        with urllib.request.urlopen(page, timeout=30) as response:
            assert b"graphiql/graphiql.min.js" in response.read()
        assets = f"http://127.0.0.1:{port}/graphiql/graphiql.min.js"  # the wheel's package data
        with urllib.request.urlopen(assets, timeout=30) as response:
            assert len(response.read()) > 1_000_000
    finally:
        process.terminate()
        process.wait(30)

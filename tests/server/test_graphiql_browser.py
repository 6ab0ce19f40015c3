"""GraphiQL end to end in a real browser with no internet: `python -m server serve --demo`,
Chromium driven by Playwright with every non-loopback request blocked, the README's example
query run from the page, its result read from the result pane.

Needs a Chromium on the machine (Debian: `apt-get install chromium`; or set
KEYGRAPH_CHROMIUM to a Chromium or Chrome binary); skipped with that advice when there is
none. KEYGRAPH_UPDATE_SCREENSHOT=1 writes the screenshot docs/server.md shows.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from bench.limits import readme_query
from keygraph.stores.dynamodb.local import free_port

ROOT = Path(__file__).parents[2]
SCREENSHOT = ROOT / "server" / "edge" / "graphiql" / "screenshot.png"
BROWSERS = ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable")
HOW_TO_GET = (
    "no Chromium found: install one (Debian/Ubuntu: `apt-get install chromium`) or set "
    "KEYGRAPH_CHROMIUM to a Chromium or Chrome binary"
)
LOOPBACK = ("127.0.0.1", "localhost")
# Chromium's own background traffic is off, as the machine has no internet.
BROWSER_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]


def _chromium() -> str:
    given = os.environ.get("KEYGRAPH_CHROMIUM")
    if given:
        return given
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    pytest.skip(HOW_TO_GET)


def _wait_healthy(url: str, process: subprocess.Popen[bytes], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with {process.returncode}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=1):
                return
        except OSError:
            time.sleep(0.2)
    raise TimeoutError("the server did not come up")


@pytest.fixture
def demo_server(tmp_path: Path) -> Iterator[str]:
    port = free_port()
    command = [sys.executable, "-m", "server", "serve", "--demo", "--port", str(port)]
    command += ["--data", str(tmp_path)]
    process = subprocess.Popen(
        command, cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_healthy(url, process)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_graphiql_runs_the_readme_query_offline(demo_server: str, tmp_path: Path) -> None:
    chromium = _chromium()
    from playwright.sync_api import Route, sync_playwright

    blocked: list[str] = []
    console: list[str] = []

    def only_loopback(route: Route) -> None:
        host = urllib.parse.urlsplit(route.request.url).hostname
        if host in LOOPBACK:
            route.continue_()
        else:
            blocked.append(route.request.url)
            route.abort()

    query = urllib.parse.quote(readme_query())
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=chromium, headless=True, args=BROWSER_ARGS
        )
        try:
            page = browser.new_page(viewport={"width": 1400, "height": 900})
            page.route("**/*", only_loopback)
            page.on("console", lambda message: console.append(message.text))
            page.goto(f"{demo_server}/graphql?query={query}")
            page.locator(".graphiql-execute-button").click(timeout=60_000)
            result = page.locator(".graphiql-response")
            result.get_by_text('"tenant": "demo"').wait_for(timeout=60_000)
            # the pane shows only the lines in view; its editor holds the whole result
            text = page.evaluate(
                "document.querySelector('.graphiql-response .CodeMirror').CodeMirror.getValue()"
            )
            page.screenshot(path=str(tmp_path / "graphiql.png"))
            if os.environ.get("KEYGRAPH_UPDATE_SCREENSHOT") == "1":
                page.screenshot(path=str(SCREENSHOT))
        finally:
            browser.close()
    result = json.loads(text)
    assert "errors" not in result
    data = result["data"]
    assert data["viewer"]["tenant"] == "demo"
    assert len(data["users"]["edges"]) == 3
    assert data["shopsNear"]
    assert data["orgRoots"]
    assert blocked == []
    assert not [line for line in console if "Content Security Policy" in line]

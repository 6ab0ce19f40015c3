"""GraphiQL end to end in a real browser with no internet: `python -m server serve --demo`,
Chromium driven by Playwright with every non-loopback request blocked, the README's example
query run from the page, its result read from the result pane; and a subscription run from
the page, over a WebSocket to the page's own origin, showing the event a mutation makes.

Needs a Chromium on the machine (Debian: `apt-get install chromium`; or set
KEYGRAPH_CHROMIUM to a Chromium or Chrome binary); skipped with that advice when there is
none. KEYGRAPH_UPDATE_SCREENSHOT=1 writes the screenshot docs/server.md shows.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, Route, WebSocket, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from keygraph.stores.dynamodb.local import free_port
from tests.waiting import answering

ROOT = Path(__file__).parents[3]
SCREENSHOT = ROOT / "docs" / "graphiql.png"
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


def readme_query() -> str:
    """The README's first GraphQL block: its example query."""
    text = (ROOT / "README.md").read_text()
    return text.split("```graphql\n", 1)[1].split("```", 1)[0]


def _chromium() -> str:
    given = os.environ.get("KEYGRAPH_CHROMIUM")
    if given:
        return given
    for name in BROWSERS:
        found = shutil.which(name)
        if found:
            return found
    pytest.skip(HOW_TO_GET)


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
        answering(f"{url}/healthz", lambda: process.poll() is None, 120)
        yield url
    finally:
        process.terminate()
        process.wait(timeout=30)


class Browser:
    """A Chromium page that may reach loopback only: what it tried elsewhere, its console
    lines, and the frames it sent over WebSockets, by socket URL."""

    def __init__(self) -> None:
        self.blocked: list[str] = []
        self.console: list[str] = []
        self.sent: dict[str, list[str]] = {}

    def only_loopback(self, route: Route) -> None:
        host = urllib.parse.urlsplit(route.request.url).hostname
        if host in LOOPBACK:
            route.continue_()
        else:
            self.blocked.append(route.request.url)
            route.abort()

    def watch(self, socket: WebSocket) -> None:
        frames = self.sent.setdefault(socket.url, [])

        def sent(frame: bytes | str) -> None:
            frames.append(frame if isinstance(frame, str) else frame.decode())

        socket.on("framesent", sent)

    def csp_violations(self) -> list[str]:
        return [line for line in self.console if "Content Security Policy" in line]


@pytest.fixture
def browser() -> Iterator[tuple[Browser, Page]]:
    """A watched Browser and its Playwright page."""
    chromium = _chromium()

    watched = Browser()
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(
            executable_path=chromium, headless=True, args=BROWSER_ARGS
        )
        try:
            page = launched.new_page(viewport={"width": 1400, "height": 900})
            page.route("**/*", watched.only_loopback)
            page.on("console", lambda message: watched.console.append(message.text))
            page.on("websocket", watched.watch)
            yield watched, page
        finally:
            launched.close()


def _result_text(page: Page) -> str:
    """The result pane's whole text: the pane shows only the lines in view, its editor
    holds them all."""
    text: str = page.evaluate(
        "document.querySelector('.graphiql-response .CodeMirror').CodeMirror.getValue()"
    )
    return text


def test_graphiql_runs_the_readme_query_offline(
    demo_server: str, browser: tuple[Browser, Page], tmp_path: Path
) -> None:
    watched, page = browser
    query = urllib.parse.quote(readme_query())
    page.goto(f"{demo_server}/graphql?query={query}")
    page.locator(".graphiql-execute-button").click(timeout=60_000)
    result = page.locator(".graphiql-response")
    result.get_by_text('"tenant": "demo"').wait_for(timeout=60_000)
    text = _result_text(page)
    page.screenshot(path=str(tmp_path / "graphiql.png"))
    if os.environ.get("KEYGRAPH_UPDATE_SCREENSHOT") == "1":
        page.screenshot(path=str(SCREENSHOT))
    result = json.loads(text)
    assert "errors" not in result
    data = result["data"]
    assert data["viewer"]["tenant"] == "demo"
    assert len(data["users"]["edges"]) == 3
    assert data["shopsNear"]
    assert data["orgRoots"]
    assert watched.blocked == []
    assert watched.sent == {}  # a query goes over HTTP
    assert watched.csp_violations() == []


SUBSCRIPTION = """subscription ($user: ID!) {
  orderChanged(userId: $user) { change order { id status } }
}"""
CREATE_ORDER = """mutation ($user: ID!) {
  createOrder(input: {userId: $user, currency: "EUR",
    items: [{sku: "MUG-1", name: "Mug", quantity: 2, unitPriceCents: 1250}]}) { id }
}"""


def _page_token(url: str) -> str:
    """An Authorization header as the page carries (dev mode prefills a fresh one)."""
    request = urllib.request.Request(f"{url}/graphql", headers={"Accept": "text/html"})
    with urllib.request.urlopen(request, timeout=30) as response:
        html = response.read().decode()
    found = re.search(r"Bearer [\w.-]+", html)
    assert found is not None
    return found.group(0)


def _post(url: str, authorization: str, query: str, variables: dict[str, str]) -> dict[str, Any]:
    request = urllib.request.Request(
        f"{url}/graphql",
        data=json.dumps({"query": query, "variables": variables}).encode(),
        headers={"Authorization": authorization, "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        body = json.loads(response.read())
    assert "errors" not in body, body
    data: dict[str, Any] = body["data"]
    return data


def _until(page: Page, condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
    """Wait for `condition`, letting Playwright deliver the page's events meanwhile (its
    sync API delivers them only inside its own calls)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"{timeout} s and still not: {what}"
        page.wait_for_timeout(100)


def test_graphiql_subscribes_and_shows_a_mutations_event(
    demo_server: str, browser: tuple[Browser, Page]
) -> None:
    watched, page = browser
    authorization = _page_token(demo_server)
    users = _post(demo_server, authorization, "{ users(first: 1) { edges { node { id } } } }", {})
    user = users["users"]["edges"][0]["node"]["id"]
    query = urllib.parse.quote(SUBSCRIPTION)
    variables = urllib.parse.quote(json.dumps({"user": user}))
    page.goto(f"{demo_server}/graphql?query={query}&variables={variables}")
    page.locator(".graphiql-execute-button").click(timeout=60_000)
    socket = demo_server.replace("http://", "ws://") + "/graphql"

    def subscribed() -> bool:
        frames = [json.loads(frame) for frame in watched.sent.get(socket, [])]
        return any(frame["type"] == "subscribe" for frame in frames)

    _until(page, subscribed, "the page subscribed over a WebSocket to its own origin")
    # the subscribe is on its way; the server registers it on arrival, so a mutation made
    # before then makes no event: make another until one shows
    created: list[str] = []
    for _ in range(20):
        order = _post(demo_server, authorization, CREATE_ORDER, {"user": user})["createOrder"]
        created.append(order["id"])
        try:
            page.locator(".graphiql-response").get_by_text('"CREATED"').wait_for(timeout=3000)
            break
        except PlaywrightTimeout:
            continue
    changed = json.loads(_result_text(page))["data"]["orderChanged"]
    assert changed["change"] == "CREATED"
    assert changed["order"]["status"] == "PENDING"
    assert changed["order"]["id"] in created
    assert list(watched.sent) == [socket]  # the page's own origin, nothing else
    # connection_init carries the Authorization header the page's headers editor holds
    config = json.loads(page.locator("#graphiql-config").text_content() or "")
    init = json.loads(watched.sent[socket][0])
    assert init == {"type": "connection_init", "payload": json.loads(config["headers"])}
    assert init["payload"]["Authorization"].startswith("Bearer ey")
    assert watched.blocked == []
    assert watched.csp_violations() == []
    # another origin, even the same server by another name, is refused by the policy
    elsewhere = socket.replace("127.0.0.1", "localhost")
    page.evaluate("url => { new WebSocket(url); }", elsewhere)
    _until(page, lambda: bool(watched.csp_violations()), "the policy refused another origin")
    assert elsewhere in watched.csp_violations()[0]
    assert elsewhere not in watched.sent

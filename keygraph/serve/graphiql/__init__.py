"""GraphiQL served by the app itself (`keygraph serve`, and this repository's server): the
page, its assets (vendored, see ASSETS) and a Content-Security-Policy that lets the page load
scripts, styles and connections from its own origin only, so it works with no internet and
under a strict policy. Subscriptions go over a WebSocket to the page's own origin, which the
policy names (`'self'` does not cover ws: and wss: in every browser).

The page carries no inline script: its settings (the endpoint, and in dev mode a fresh token
for the Authorization header) travel in a JSON block that the bootstrap script reads.
"""

from __future__ import annotations

import re
from pathlib import Path

import orjson
from starlette.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).with_name("static")
ASSETS_PATH = "/graphiql"
"""Where the assets are mounted."""

_POLICY = (
    "default-src 'none'",
    "script-src 'self'",
    "style-src 'self'",
    "connect-src 'self'",
    "img-src 'self' data:",
    "font-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
)
"""GraphiQL's fonts and icons are data: URLs inside its stylesheet."""

_WEBSOCKET_SCHEMES = {"http": "ws", "https": "wss"}
_HOST = re.compile(r"(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*|\[[0-9a-f:.]+\])(?::(\d{1,5}))?")


def websocket_origin(scheme: str, host: str) -> str | None:
    """The WebSocket origin of a page fetched over `scheme` from `host` (the Host header):
    ws: for http, wss: for https; None when the host is no plain host[:port], so nothing a
    client sends can add a source or a directive to the policy."""
    socket_scheme = _WEBSOCKET_SCHEMES.get(scheme)
    host = host.lower()
    match = _HOST.fullmatch(host)
    if socket_scheme is None or match is None:
        return None
    port = match.group(1)
    if port is not None and not 0 < int(port) < 65536:
        return None
    return f"{socket_scheme}://{host}"


def content_security_policy(websocket: str | None) -> str:
    """The page's policy: everything from its own origin, connections also to `websocket`."""
    if websocket is None:
        return "; ".join(_POLICY)
    connect = f"connect-src 'self' {websocket}"
    return "; ".join(connect if d == "connect-src 'self'" else d for d in _POLICY)


DEFAULT_QUERY = """# keygraph's GraphiQL: run a query with Ctrl-Enter.
{
  __typename
}
"""

_SCRIPTS = (
    "react.production.min.js",
    "react-dom.production.min.js",
    "graphiql.min.js",
    "plugin-explorer.umd.js",
    "keygraph-graphiql.js",
)
_STYLES = ("graphiql.min.css", "plugin-explorer.css", "keygraph-graphiql.css")


def assets() -> StaticFiles:
    """The static files the page loads, to mount at ASSETS_PATH."""
    return StaticFiles(directory=STATIC_DIR)


def _json_block(value: object) -> str:
    """JSON safe inside a <script> element: no "</" can end it early."""
    return orjson.dumps(value).decode().replace("</", "<\\/")


def page(
    endpoint: str,
    authorization: str | None,
    websocket: str | None,
    default_query: str = DEFAULT_QUERY,
) -> HTMLResponse:
    """GraphiQL's page for `endpoint`, with the Authorization header prefilled when given;
    its subscriptions connect to `websocket` (websocket_origin), the page's own origin."""
    base = ASSETS_PATH.lstrip("/")
    headers = (
        None
        if authorization is None
        else orjson.dumps({"Authorization": authorization}, option=orjson.OPT_INDENT_2).decode()
    )
    config = {"endpoint": endpoint, "headers": headers, "defaultQuery": default_query}
    styles = "".join(f'<link rel="stylesheet" href="{base}/{name}">' for name in _STYLES)
    scripts = "".join(f'<script src="{base}/{name}"></script>' for name in _SCRIPTS)
    html = (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<title>keygraph · GraphiQL</title><link rel="icon" href="data:,">'
        f"{styles}</head><body>"
        '<div id="graphiql">Loading GraphiQL…</div>'
        f'<script id="graphiql-config" type="application/json">{_json_block(config)}</script>'
        f"{scripts}</body></html>"
    )
    return HTMLResponse(
        html,
        headers={
            "Content-Security-Policy": content_security_policy(websocket),
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-store",
        },
    )

"""GraphiQL served by the server itself: the page, its assets (vendored, see ASSETS) and a
Content-Security-Policy that lets the page load scripts, styles and connections from its own
origin only, so it works with no internet and under a strict policy.

The page carries no inline script: its settings (the endpoint, and in dev mode a fresh token
for the Authorization header) travel in a JSON block that the bootstrap script reads.
"""

from __future__ import annotations

from pathlib import Path

import orjson
from starlette.responses import HTMLResponse
from starlette.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).with_name("static")
ASSETS_PATH = "/graphiql"
"""Where the assets are mounted."""

CONTENT_SECURITY_POLICY = "; ".join(
    (
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
)
"""GraphiQL's fonts and icons are data: URLs inside its stylesheet."""

DEFAULT_QUERY = """# keygraph's GraphiQL: run a query with Ctrl-Enter.
{
  viewer { tenant subject roles }
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


def page(endpoint: str, authorization: str | None) -> HTMLResponse:
    """GraphiQL's page for `endpoint`, with the Authorization header prefilled when given."""
    base = ASSETS_PATH.lstrip("/")
    headers = (
        None
        if authorization is None
        else orjson.dumps({"Authorization": authorization}, option=orjson.OPT_INDENT_2).decode()
    )
    config = {"endpoint": endpoint, "headers": headers, "defaultQuery": DEFAULT_QUERY}
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
            "Content-Security-Policy": CONTENT_SECURITY_POLICY,
            "X-Content-Type-Options": "nosniff",
            "Referrer-Policy": "no-referrer",
            "Cache-Control": "no-store",
        },
    )

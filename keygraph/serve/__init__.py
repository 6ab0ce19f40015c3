"""Serving a generated package's API over HTTP (`keygraph serve`): the app, the command that
runs it on the embedded store or DynamoDB, the tenant budget and GraphiQL's offline page
(both also the repository's server's). Needs the `serve` extra (`pip install
'keygraph[serve]'`)."""

from .app import create_app
from .served import Served

__all__ = ["Served", "create_app"]

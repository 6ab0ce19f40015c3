"""Serving a generated package's API over HTTP (`keygraph serve`): the app, and the command
that runs it on the embedded store or DynamoDB. Needs the `serve` extra
(`pip install 'keygraph[serve]'`)."""

from .app import Served, create_app

__all__ = ["Served", "create_app"]

"""A generated package's API on AWS Lambda, behind an HTTP API (payload 1.0 or 2.0), a REST
API, an ALB or a function URL: the app `keygraph serve` runs, adapted by Mangum. It is built
once per execution environment, at import (the init phase), from KEYGRAPH_PACKAGE (the
package's import name), KEYGRAPH_TABLE_NAME (the deployed table), KEYGRAPH_JWT_SECRET and,
for another endpoint than AWS's, KEYGRAPH_ENDPOINT_URL. Needs the `lambda` extra."""

from __future__ import annotations

import os

from mangum import Mangum

from keygraph.stores.dynamodb.store import DynamoDBStore

from .app import create_app
from .package import served, table_of
from .secret import secret
from .served import MEDIA

PACKAGE = os.environ.get("KEYGRAPH_PACKAGE", "generated")

store = DynamoDBStore(
    table_of(PACKAGE, os.environ.get("KEYGRAPH_TABLE_NAME")),
    endpoint_url=os.environ.get("KEYGRAPH_ENDPOINT_URL"),
)
app = create_app(served(PACKAGE, store, secret()))
handler = Mangum(app, lifespan="off", text_mime_types=[MEDIA, "text/html"])
"""Answers are text (a REST API without binary media types would pass base64 on)."""

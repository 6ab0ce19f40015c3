"""A generated package's API on AWS Lambda, behind an HTTP API (payload 1.0 or 2.0), a REST
API, an ALB or a function URL: the app `keygraph serve` runs, adapted by Mangum. It is built
once per execution environment, at import (the init phase, with no cyclic collection:
startup.py), from KEYGRAPH_PACKAGE (the package's import name), KEYGRAPH_TABLE_NAME (the
deployed table), KEYGRAPH_JWT_SECRET, KEYGRAPH_EXTEND (extensions' `module[:name]`, comma
separated, as `keygraph serve --extend` takes them) and, for another endpoint than AWS's,
KEYGRAPH_ENDPOINT_URL; traces as KEYGRAPH_TRACING and the other trace variables say
(trace_settings.py), their spans sent before each invocation returns. A request is cut at
KEYGRAPH_REQUEST_TIMEOUT (request_settings.py) or LAMBDA_MARGIN_SECONDS before its
invocation's time is up, whichever comes first, so that it is answered 504 TIMEOUT rather
than ended by Lambda; each is logged as a JSON line (request_log.py) on stderr, which Lambda
sends to CloudWatch Logs. `sweep` is the scheduled function removing what owners' deletes
left. Needs the `lambda` extra."""

from __future__ import annotations

import asyncio
import os
from typing import Any

from .lambda_time import invocation_time_left
from .startup import building

with building():
    from mangum import Mangum

    from keygraph.store import Session
    from keygraph.stores.dynamodb.store import DynamoDBStore
    from keygraph.writes import sweep as sweep_owned

    from . import request_log
    from .app import create_app
    from .package import extension_at, served, table_of
    from .request_settings import request_settings
    from .secret import secret
    from .served import MEDIA
    from .trace_provider import tracer_provider
    from .trace_settings import trace_settings

    PACKAGE = os.environ.get("KEYGRAPH_PACKAGE", "generated")

    store = DynamoDBStore(
        table_of(PACKAGE, os.environ.get("KEYGRAPH_TABLE_NAME")),
        endpoint_url=os.environ.get("KEYGRAPH_ENDPOINT_URL"),
    )
    places = os.environ.get("KEYGRAPH_EXTEND", "").split(",")
    extensions = [extension_at(place.strip(), PACKAGE) for place in places if place.strip()]
    provider = tracer_provider(trace_settings())
    timeout = request_settings().request_timeout
    served_app = served(
        PACKAGE,
        store,
        secret(),
        extensions,
        tracer_provider=provider,
        request_timeout=timeout,
        time_left=invocation_time_left,
    )
    request_log.configure()
    app = create_app(served_app)
    answering = Mangum(app, lifespan="off", text_mime_types=[MEDIA, "text/html"])
    """Answers are text (a REST API without binary media types would pass base64 on)."""


def handler(event: Any, context: Any) -> dict[str, Any]:
    """An invocation: its request answered, and the spans it made sent before the
    execution environment is frozen (in it, the exporter's thread would wait)."""
    try:
        return answering(event, context)
    finally:
        if provider is not None:
            provider.force_flush()


SWEEP_MARGIN_SECONDS = 5.0
"""Of an invocation's time, what a sweep leaves unused: a page under way ends in it."""


def sweep(_event: Any, context: Any) -> dict[str, int]:
    """A scheduled invocation: removes what owners' deletes left, until the invocation's
    time less SWEEP_MARGIN_SECONDS; how many tasks it finished and how many are left."""
    seconds = max(0.0, context.get_remaining_time_in_millis() / 1000 - SWEEP_MARGIN_SECONDS)
    session = Session(store, served_app.cursors)
    work = sweep_owned(session, served_app.sweeps, seconds)
    done, left = asyncio.get_event_loop().run_until_complete(work)  # Mangum's loop
    return {"done": done, "left": left}

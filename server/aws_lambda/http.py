"""The server's HTTP API on Lambda: the app `serve` runs, built once per execution
environment at its first event and adapted by Mangum to API Gateway (HTTP API, payload 1.0
or 2.0, and REST API), ALB and function URL events. Without a long-lived process it serves
no subscriptions (no change stream is read) and runs nothing in the background: a cleanup
a request does not finish inline stays pending for `schedule.handler`."""

from __future__ import annotations

import functools
from typing import Any

from keygraph.serve.startup import building

with building():
    from mangum import Mangum
    from mangum.adapter import DEFAULT_TEXT_MIME_TYPES

    from server.aws_lambda import environment
    from server.domain import cleanup
    from server.edge.app import create_app
    from server.edge.gc_tuning import tune_for_serving
    from server.edge.response import GRAPHQL_RESPONSE


@functools.cache
def adapter() -> Mangum:
    """The app on this environment's store, in Mangum: no lifespan (it would run around
    every event), answers as text (a REST API without binary media types passes base64)."""
    settings = environment.settings()
    environment.loop()  # current before Mangum looks for one
    with building():
        app = create_app(settings, environment.store(), own_stream=False)
    tune_for_serving(settings.gc_young_threshold)
    return Mangum(app, lifespan="off", text_mime_types=[*DEFAULT_TEXT_MIME_TYPES, GRAPHQL_RESPONSE])


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The answer to an HTTP event; a cleanup its request leaves waits for the schedule."""
    adapted = adapter()
    with cleanup.left_for_schedule():
        return adapted(event, context)

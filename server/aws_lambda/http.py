"""The server's HTTP API on Lambda: the compiled API `serve` answers with
(server/compiled.py), built once per execution environment at its first event and
adapted by Mangum to API Gateway (HTTP API, payload 1.0 or 2.0, and REST API), ALB and
function URL events, each request cut before its invocation's time is up (keygraph serve's
Lambda margin). Without a long-lived process it serves no subscriptions (no change stream
is read) and runs nothing in the background: a cleanup a request does not finish inline
stays pending for `schedule.handler`."""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

from keygraph.serve.startup import building

with building():
    from mangum import Mangum

    from keygraph.serve import create_app
    from keygraph.serve.gc_tuning import tune_for_serving
    from keygraph.serve.lambda_time import invocation_time_left
    from keygraph.serve.served import MEDIA
    from server.aws_lambda import environment
    from server.compiled import compiled
    from server.domain import cleanup


@functools.cache
def adapter() -> Mangum:
    """The app on this environment's store, in Mangum: no lifespan (it would run around
    every event), answers as text (a REST API without binary media types passes base64)."""
    settings = environment.settings()
    environment.loop()  # current before Mangum looks for one
    with building():
        served = compiled(settings, environment.store())
        served = dataclasses.replace(served, realtime=None, time_left=invocation_time_left)
        app = create_app(served)
    tune_for_serving(settings.gc_young_threshold)
    return Mangum(app, lifespan="off", text_mime_types=[MEDIA, "text/html"])


def handler(event: dict[str, Any], context: Any) -> dict[str, Any]:
    """The answer to an HTTP event; a cleanup its request leaves waits for the schedule."""
    adapted = adapter()
    with cleanup.left_for_schedule():
        return adapted(event, context)

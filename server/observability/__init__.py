"""What an operator watches: Prometheus metrics at /metrics and OpenTelemetry traces, each
off unless the settings turn it on (docs/operations.md). Its modules are imported only
when one is on: a server observing nothing loads neither library."""

REQUEST_SCOPE_KEY = "keygraph.request"
"""Where the ASGI scope holds the request, an ObservedRequest, for ObservedEndpoint to read
once the endpoint answered (requests.py)."""

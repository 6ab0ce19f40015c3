"""What an operator watches: Prometheus metrics at /metrics and OpenTelemetry traces, each
off unless the settings turn it on (docs/operations.md)."""

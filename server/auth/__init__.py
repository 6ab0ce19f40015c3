"""Authentication: bearer tokens verified into claims (the tenant and the caller), for
HTTP requests and WebSocket connections alike, and dev tokens issued."""

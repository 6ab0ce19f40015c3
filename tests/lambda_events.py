"""Lambda events as AWS sends them for one HTTP request, per event source: API Gateway's
HTTP API (payload 2.0), its REST API (1.0), an ALB and a function URL; and what an answer to
one says."""

from __future__ import annotations

import base64
import json
from typing import Any
from urllib.parse import unquote

KINDS = ("http-api", "rest-api", "alb", "function-url")


def event(
    kind: str, method: str, query: str, body: str | None, token: str | None
) -> dict[str, Any]:
    """A request to /graphql from `kind`: its method, query string (percent-encoded, as
    sent), body and Authorization header (none when `token` is None)."""
    headers = {"content-type": "application/json", "accept": "application/graphql-response+json"}
    if token:
        headers["authorization"] = token
    encoded = base64.b64encode((body or "").encode()).decode()
    if kind in ("http-api", "function-url"):
        context: dict[str, Any] = {
            "http": {"method": method, "path": "/graphql", "sourceIp": "198.51.100.7"}
        }
        if kind == "function-url":
            context["domainName"] = "abc.lambda-url.eu-west-1.on.aws"
        return {
            "version": "2.0",
            "routeKey": f"{method} /graphql" if kind == "http-api" else "$default",
            "rawPath": "/graphql",
            "rawQueryString": query,
            "headers": headers,
            "requestContext": context,
            "body": encoded,
            "isBase64Encoded": True,
        }
    # an ALB passes the query string as sent; API Gateway's REST API decodes it
    decode = (lambda value: value) if kind == "alb" else unquote
    params = {k: decode(v) for k, v in (p.split("=", 1) for p in query.split("&") if p)} or None
    common = {
        "httpMethod": method,
        "path": "/graphql",
        "headers": headers,
        "queryStringParameters": params,
        "body": body,
        "isBase64Encoded": False,
    }
    if kind == "alb":
        return common | {"requestContext": {"elb": {"targetGroupArn": "arn:aws:test"}}}
    return common | {
        "resource": "/graphql",
        "multiValueHeaders": {k: [v] for k, v in headers.items()},
        "multiValueQueryStringParameters": {k: [v] for k, v in (params or {}).items()} or None,
        "requestContext": {
            "resourcePath": "/graphql",
            "httpMethod": method,
            "stage": "prod",
            "identity": {"sourceIp": "198.51.100.7"},
        },
    }


def headers_of(response: dict[str, Any]) -> dict[str, str]:
    """An answer's headers, names in lower case, whether single or multi-valued."""
    headers = {k.lower(): v for k, v in (response.get("headers") or {}).items()}
    multi = {k.lower(): v[0] for k, v in (response.get("multiValueHeaders") or {}).items()}
    return headers | multi


def answered(response: dict[str, Any]) -> tuple[int, str, Any]:
    """Status, media type and the JSON body of an answer sent as text."""
    assert not response.get("isBase64Encoded"), response
    body = response["body"]
    return response["statusCode"], headers_of(response)["content-type"], json.loads(body)

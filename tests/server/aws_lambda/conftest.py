"""The server's Lambda functions on DynamoDB Local: a new table, the function's environment
variables as a deployment sets them, and each execution environment's once-built state
(settings, loop, store, app) made anew per test and closed after it."""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest

from generated.table import TABLE
from keygraph.stores.dynamodb import admin
from keygraph.stores.dynamodb.local import LOCAL_KEY_ID, LOCAL_REGION, LOCAL_SECRET, DynamoDBLocal
from keygraph.tokens import issue
from server.aws_lambda import environment, http
from testkit.stores import unique_table
from tests.lambda_events import event

SECRET = "lambda-server-secret-" + "s" * 32


def bearer(tenant: str) -> str:
    return f"Bearer {issue(SECRET, tenant, 'alice', roles=['admin'])}"


def _fresh() -> None:
    for built in (environment.settings, environment.loop, environment.store, http.adapter):
        built.cache_clear()


@pytest.fixture
def deployed(
    dynamodb_local: DynamoDBLocal, dynamodb_client: Any, monkeypatch: pytest.MonkeyPatch
) -> Iterator[str]:
    """The functions' variables set for a new table (its name), as a stack would set them;
    nothing else of KEYGRAPH_* from this machine."""
    table = unique_table(TABLE)
    admin.create_table(dynamodb_client, table)
    for name in [name for name in os.environ if name.startswith("KEYGRAPH_")]:
        monkeypatch.delenv(name)
    variables = {
        "KEYGRAPH_TABLE": table.name,
        "KEYGRAPH_DYNAMODB_ENDPOINT": dynamodb_local.endpoint_url,
        "KEYGRAPH_JWT_SECRET": SECRET,
        "AWS_REGION": LOCAL_REGION,
        "AWS_ACCESS_KEY_ID": LOCAL_KEY_ID,
        "AWS_SECRET_ACCESS_KEY": LOCAL_SECRET,
    }
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    _fresh()
    try:
        yield table.name
    finally:
        loop = environment.loop()
        loop.run_until_complete(environment.store().close())
        asyncio.set_event_loop(None)
        loop.close()
        _fresh()
        admin.delete_table(dynamodb_client, table.name)


def post(query: str, variables: dict[str, Any], tenant: str, kind: str = "http-api") -> Any:
    """The data of a GraphQL request sent to the HTTP function as `tenant`'s admin."""
    body = json.dumps({"query": query, "variables": variables})
    answer = http.handler(event(kind, "POST", "", body, bearer(tenant)), None)
    assert answer["statusCode"] == 200, answer
    result = json.loads(answer["body"])
    assert "errors" not in result, result
    return result["data"]

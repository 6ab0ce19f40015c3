"""What one Lambda execution environment builds once, at its first event: the settings
from its variables, checked for what a function can run, the event loop every invocation
runs on, and the DynamoDB store on that loop."""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import os
from collections.abc import Mapping

from generated.table import TABLE
from keygraph.stores.dynamodb.store import DynamoDBStore
from server.settings import Settings, SettingsError, load_settings


def lambda_settings(environ: Mapping[str, str]) -> Settings:
    """The settings KEYGRAPH_* give on Lambda: the DynamoDB store in the function's region
    (AWS_REGION) unless KEYGRAPH_REGION says otherwise, and GraphiQL off unless
    KEYGRAPH_GRAPHIQL asks. SettingsError for what needs a long-lived process or a disk."""
    store = environ.get("KEYGRAPH_STORE") or "dynamodb"
    if store != "dynamodb":
        raise SettingsError(
            f"on Lambda the store is DynamoDB, not {store!r}: set KEYGRAPH_STORE=dynamodb (or "
            "leave it unset) and KEYGRAPH_TABLE to the deployed table"
        )
    if not environ.get("KEYGRAPH_JWT_SECRET") and not environ.get("KEYGRAPH_JWT_PUBLIC_KEY_FILE"):
        raise SettingsError(
            "on Lambda set KEYGRAPH_JWT_SECRET or KEYGRAPH_JWT_PUBLIC_KEY_FILE: a dev secret "
            "would be made anew by each execution environment"
        )
    if environ.get("KEYGRAPH_METRICS_PORT"):
        raise SettingsError(
            "KEYGRAPH_METRICS_PORT needs a long-lived process: a function has no port to serve"
        )
    return load_settings(
        environ,
        store="dynamodb",
        region=None if environ.get("KEYGRAPH_REGION") else environ.get("AWS_REGION"),
        graphiql=None if environ.get("KEYGRAPH_GRAPHIQL") else False,
    )


@functools.cache
def settings() -> Settings:
    return lambda_settings(os.environ)


@functools.cache
def loop() -> asyncio.AbstractEventLoop:
    """The loop of every invocation, current in this thread (Mangum runs on the current
    one): the store's connections live on it from one event to the next."""
    running = asyncio.new_event_loop()
    asyncio.set_event_loop(running)
    return running


@functools.cache
def store() -> DynamoDBStore:
    config = settings()
    return DynamoDBStore(
        dataclasses.replace(TABLE, name=config.table),
        endpoint_url=config.dynamodb_endpoint,
        region=config.region,
        idle_timeout=config.dynamodb_idle_timeout,
    )

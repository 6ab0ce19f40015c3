"""Connections to DynamoDB: the boto3 client for the control plane, and the lean transport
for the data plane, from explicit settings or from such a client."""

from __future__ import annotations

from typing import Any

import boto3
import botocore.session
from botocore.config import Config

from keygraph.errors import StoreUnavailable

from .connections import IDLE_TIMEOUT
from .transport import Transport, default_endpoint


def make_client(
    endpoint_url: str | None = None,
    region: str | None = None,
    max_connections: int = 64,
    access_key_id: str | None = None,
    secret_access_key: str | None = None,
    connect_timeout: float = 2.0,
    read_timeout: float = 10.0,
) -> Any:
    """A low-level boto3 DynamoDB client for the control plane (creating, describing and
    changing tables), retrying throttling and transient failures as botocore's standard mode
    does (DynamoDB Local answers InternalFailure now and then while an index is built)."""
    config = Config(
        max_pool_connections=max_connections,
        retries={"mode": "standard", "total_max_attempts": 5},
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        tcp_keepalive=True,
    )
    session = boto3.session.Session()
    return session.client(
        "dynamodb",
        endpoint_url=endpoint_url,
        region_name=region,
        aws_access_key_id=access_key_id,
        aws_secret_access_key=secret_access_key,
        config=config,
    )


def transport_for(
    client: Any, max_connections: int, idle_timeout: float = IDLE_TIMEOUT
) -> Transport:
    """A data-plane transport to the same endpoint, region and credentials as a client from
    `make_client`, with its timeouts."""
    config = client.meta.config
    return Transport(
        client.meta.endpoint_url,
        client.meta.region_name,
        # botocore keeps the client's credential object (refreshing or not) on its signer;
        # boto3 is pinned, so this private accessor is stable for us.
        client._get_credentials(),
        max_connections=max_connections,
        connect_timeout=config.connect_timeout,
        read_timeout=config.read_timeout,
        idle_timeout=idle_timeout,
    )


def make_transport(
    endpoint_url: str | None,
    region: str | None,
    max_connections: int,
    access_key_id: str | None = None,
    secret_access_key: str | None = None,
    idle_timeout: float = IDLE_TIMEOUT,
) -> Transport:
    """A transport with botocore's credential chain and region configuration (explicit
    keys, when given, take precedence); the endpoint defaults to the region's."""
    session = botocore.session.Session()
    if access_key_id is not None and secret_access_key is not None:
        session.set_credentials(access_key_id, secret_access_key)
    region = region or session.get_config_variable("region")
    if not region:
        raise StoreUnavailable("no AWS region configured for DynamoDB")
    return Transport(
        endpoint_url or default_endpoint(region),
        region,
        session.get_credentials(),
        max_connections=max_connections,
        idle_timeout=idle_timeout,
    )

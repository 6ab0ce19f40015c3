"""Connections to DynamoDB: the boto3 client for the control plane, and the lean transport
for the data plane, from explicit settings or from such a client.

Both resolve their settings the same way (`resolve`): a local endpoint (DynamoDB Local on
this machine) needs no AWS configuration and gets dummy credentials and region unless given
some; any other endpoint takes the given ones, else botocore's usual chain, and a missing
region or credentials is a StoreNotConfigured saying what to set. The transport reads what
the chain would find first (`fixed`) without loading botocore's session, as on Lambda.
"""

from __future__ import annotations

import ipaddress
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from botocore.exceptions import BotoCoreError

from keygraph.errors import StoreNotConfigured

from .connections import IDLE_TIMEOUT
from .transport import Credentials, Transport, default_endpoint

if TYPE_CHECKING:
    import botocore.session

REGION_HELP = (
    "no AWS region for DynamoDB: pass region= (e.g. region='eu-west-1'), or set AWS_REGION "
    "or AWS_DEFAULT_REGION, or `region` in ~/.aws/config; for DynamoDB Local pass "
    "endpoint_url='http://localhost:8000' instead"
)
CREDENTIALS_HELP = (
    "no AWS credentials for DynamoDB: pass access_key_id= and secret_access_key=, or set "
    "AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE (with ~/.aws/credentials), "
    "or run where an IAM role provides them; for DynamoDB Local pass "
    "endpoint_url='http://localhost:8000' instead"
)


def is_local(endpoint_url: str | None) -> bool:
    """Whether the endpoint is on this machine (localhost, a loopback address): DynamoDB
    Local, which checks neither credentials nor region."""
    if not endpoint_url:
        return False
    host = urlsplit(endpoint_url).hostname or ""
    if host == "localhost" or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    return address.is_loopback or address.is_unspecified


@dataclass(frozen=True, slots=True)
class Resolved:
    """Where and as whom to call DynamoDB: the endpoint as given (None: the region's), the
    region, and a botocore session holding the credentials."""

    endpoint_url: str | None
    region: str
    session: botocore.session.Session


@dataclass(frozen=True, slots=True)
class Fixed:
    """Credentials that never change, as botocore's Credentials would hold them."""

    access_key: str
    secret_key: str
    token: str | None = None

    def get_frozen_credentials(self) -> Fixed:
        return self


def _both_or_neither(access_key_id: str | None, secret_access_key: str | None) -> None:
    if (access_key_id is None) != (secret_access_key is None):
        given = "access_key_id" if access_key_id is not None else "secret_access_key"
        raise StoreNotConfigured(
            f"DynamoDB credentials take both access_key_id and secret_access_key; only "
            f"{given} was given"
        )


def fixed(
    endpoint_url: str | None,
    region: str | None,
    access_key_id: str | None = None,
    secret_access_key: str | None = None,
) -> tuple[str, Fixed] | None:
    """The region and credentials `resolve` would find, when they are given, DynamoDB
    Local's, or in AWS_* variables with no profile or expiry; None when only botocore's
    chain can tell."""
    _both_or_neither(access_key_id, secret_access_key)
    if is_local(endpoint_url):
        from .local import LOCAL_KEY_ID, LOCAL_REGION, LOCAL_SECRET  # not loaded for AWS

        return region or LOCAL_REGION, Fixed(
            access_key_id or LOCAL_KEY_ID, secret_access_key or LOCAL_SECRET
        )
    env = os.environ
    region = region or env.get("AWS_REGION") or env.get("AWS_DEFAULT_REGION")
    if not region:
        return None
    if access_key_id is not None and secret_access_key is not None:
        return region, Fixed(access_key_id, secret_access_key)
    # botocore's chain reads AWS_* first; a profile or an expiry sends it elsewhere.
    variables = ("AWS_PROFILE", "AWS_DEFAULT_PROFILE", "AWS_CREDENTIAL_EXPIRATION")
    key, secret = env.get("AWS_ACCESS_KEY_ID"), env.get("AWS_SECRET_ACCESS_KEY")
    if any(env.get(name) for name in variables) or not key or not secret:
        return None
    return region, Fixed(key, secret, env.get("AWS_SECURITY_TOKEN") or env.get("AWS_SESSION_TOKEN"))


def resolve(
    endpoint_url: str | None,
    region: str | None,
    access_key_id: str | None = None,
    secret_access_key: str | None = None,
) -> Resolved:
    """The endpoint, region and credentials to use (module docstring); StoreNotConfigured
    when something is missing, never a botocore exception."""
    import botocore.session

    _both_or_neither(access_key_id, secret_access_key)
    session = botocore.session.Session()
    if is_local(endpoint_url):
        from .local import LOCAL_KEY_ID, LOCAL_REGION, LOCAL_SECRET

        session.set_credentials(access_key_id or LOCAL_KEY_ID, secret_access_key or LOCAL_SECRET)
        return Resolved(endpoint_url, region or LOCAL_REGION, session)
    if access_key_id is not None and secret_access_key is not None:
        session.set_credentials(access_key_id, secret_access_key)
    try:
        # AWS_REGION, as the other AWS SDKs read it; botocore reads AWS_DEFAULT_REGION.
        region = region or os.environ.get("AWS_REGION") or session.get_config_variable("region")
        credentials = session.get_credentials()
    except BotoCoreError as exc:
        raise StoreNotConfigured(f"the AWS configuration cannot be read: {exc}") from exc
    if not region:
        raise StoreNotConfigured(REGION_HELP)
    if credentials is None:
        raise StoreNotConfigured(CREDENTIALS_HELP)
    return Resolved(endpoint_url, region, session)


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
    from botocore.config import Config

    resolved = resolve(endpoint_url, region, access_key_id, secret_access_key)
    config = Config(
        max_pool_connections=max_connections,
        retries={"mode": "standard", "total_max_attempts": 5},
        connect_timeout=connect_timeout,
        read_timeout=read_timeout,
        tcp_keepalive=True,
    )
    import boto3  # the control plane's only: serving (a Lambda's cold start) goes without

    session = boto3.session.Session(botocore_session=resolved.session)
    return session.client(
        "dynamodb", endpoint_url=endpoint_url, region_name=resolved.region, config=config
    )


def transport_for(
    client: Any, max_connections: int, idle_timeout: float = IDLE_TIMEOUT
) -> Transport:
    """A data-plane transport to the same endpoint, region and credentials as a client from
    `make_client`, with its timeouts."""
    config = client.meta.config
    # botocore keeps the client's credential object (refreshing or not) on its signer;
    # boto3 is pinned, so this private accessor is stable for us.
    credentials = client._get_credentials()
    if credentials is None:
        raise StoreNotConfigured(CREDENTIALS_HELP)
    return Transport(
        client.meta.endpoint_url,
        client.meta.region_name,
        credentials,
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
    """A transport to the endpoint (the region's by default) with the credentials and region
    `resolve` finds."""
    found = fixed(endpoint_url, region, access_key_id, secret_access_key)
    credentials: Credentials | None
    if found is None:
        resolved = resolve(endpoint_url, region, access_key_id, secret_access_key)
        region, credentials = resolved.region, resolved.session.get_credentials()
    else:
        region, credentials = found
    return Transport(
        endpoint_url or default_endpoint(region),
        region,
        credentials,
        max_connections=max_connections,
        idle_timeout=idle_timeout,
    )

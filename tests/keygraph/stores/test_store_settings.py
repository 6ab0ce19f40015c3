"""What the stores' constructors take and say: the table first and the rest by name; a
DynamoDB Local endpoint with no AWS configuration at all; against AWS, a missing region or
credentials named with what to set, never a botocore exception, in the constructor or
later (refused credentials, an endpoint not answering, on either plane)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from botocore.exceptions import BotoCoreError, ClientError, EndpointConnectionError

from keygraph.errors import StoreNotConfigured, StoreUnavailable
from keygraph.plan import Get, Put
from keygraph.stores import DynamoDBStore, EmbeddedStore, admin_of
from keygraph.stores.dynamodb import admin
from keygraph.stores.dynamodb.admin import DynamoDBAdmin
from keygraph.stores.dynamodb.connect import is_local
from keygraph.stores.dynamodb.errors import map_error
from keygraph.stores.dynamodb.local import LOCAL_REGION, DynamoDBLocal
from keygraph.stores.dynamodb.transport import ServiceError
from testkit.stores import TEST_TABLE, unique_table


@pytest.fixture
def no_aws_config(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No region, credentials, profile or instance role anywhere botocore looks."""
    for name in list(os.environ):
        if name.startswith("AWS_") and name != "AWS_CA_BUNDLE":
            monkeypatch.delenv(name)
    monkeypatch.setenv("AWS_CONFIG_FILE", str(tmp_path / "no-config"))
    monkeypatch.setenv("AWS_SHARED_CREDENTIALS_FILE", str(tmp_path / "no-credentials"))
    monkeypatch.setenv("AWS_EC2_METADATA_DISABLED", "true")


async def test_both_stores_take_the_table_first_and_the_rest_by_name(tmp_path: Path) -> None:
    with pytest.raises(TypeError, match="positional"):
        EmbeddedStore(tmp_path / "old.sqlite3", TEST_TABLE)  # type: ignore[arg-type,call-arg]
    with pytest.raises(TypeError, match=r"table definition first .* EmbeddedStore\(TABLE"):
        EmbeddedStore(tmp_path / "old.sqlite3", path=tmp_path)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"DynamoDBStore\(TABLE"):
        DynamoDBStore("kg_test", endpoint_url="http://localhost:8000")  # type: ignore[arg-type]
    store = EmbeddedStore(TEST_TABLE, path=tmp_path / "new.sqlite3")
    assert store.path == tmp_path / "new.sqlite3"
    await store.close()


@pytest.mark.usefixtures("no_aws_config")
async def test_a_local_endpoint_needs_no_aws_configuration() -> None:
    store = DynamoDBStore(TEST_TABLE, endpoint_url="http://localhost:9")
    assert store.transport.signer.region == LOCAL_REGION
    assert store.transport.credentials is not None
    assert store.client.meta.region_name == LOCAL_REGION
    await store.close()
    given = DynamoDBStore(
        TEST_TABLE,
        endpoint_url="http://127.0.0.1:9",
        region="eu-west-1",
        access_key_id="mine",
        secret_access_key="secret",
    )
    assert given.transport.signer.region == "eu-west-1"
    assert given.transport.credentials is not None
    assert given.transport.credentials.get_frozen_credentials().access_key == "mine"
    await given.close()


@pytest.mark.parametrize(
    ("url", "local"),
    [
        ("http://localhost:8000", True),
        ("http://dynamodb.localhost:8000", True),
        ("http://127.0.0.1:8000", True),
        ("http://127.8.0.3:8000", True),
        ("http://[::1]:8000", True),
        ("http://0.0.0.0:8000", True),
        ("https://dynamodb.eu-west-1.amazonaws.com", False),
        ("http://dynamodb-local:8000", False),
        ("http://10.0.0.5:8000", False),
        (None, False),
    ],
)
def test_which_endpoints_are_local(url: str | None, local: bool) -> None:
    assert is_local(url) is local


@pytest.mark.usefixtures("no_aws_config")
def test_aws_without_a_region_says_how_to_set_one() -> None:
    with pytest.raises(StoreNotConfigured, match=r"region=.*AWS_REGION.*endpoint_url") as caught:
        DynamoDBStore(TEST_TABLE)
    assert not isinstance(caught.value.__cause__, BotoCoreError)


@pytest.mark.usefixtures("no_aws_config")
def test_aws_without_credentials_says_how_to_set_them() -> None:
    with pytest.raises(StoreNotConfigured, match=r"access_key_id=.*AWS_ACCESS_KEY_ID"):
        DynamoDBStore(TEST_TABLE, region="eu-west-1")
    with pytest.raises(StoreNotConfigured, match=r"access_key_id=.*AWS_ACCESS_KEY_ID"):
        DynamoDBStore(TEST_TABLE, endpoint_url="http://dynamodb-local:8000", region="eu-west-1")
    with pytest.raises(StoreNotConfigured, match="both access_key_id and secret_access_key"):
        DynamoDBStore(TEST_TABLE, region="eu-west-1", access_key_id="AKID")


@pytest.mark.usefixtures("no_aws_config")
def test_a_missing_profile_is_named_not_raised_by_botocore(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AWS_PROFILE", "nowhere")
    with pytest.raises(StoreNotConfigured, match="nowhere") as caught:
        DynamoDBStore(TEST_TABLE, region="eu-west-1")
    assert not isinstance(caught.value, BotoCoreError)


@pytest.mark.usefixtures("no_aws_config")
def test_aws_credentials_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AWS_REGION", "ap-south-1")
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "FROMENV")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "secret")
    store = DynamoDBStore(TEST_TABLE)
    assert store.transport.endpoint_url == "https://dynamodb.ap-south-1.amazonaws.com"
    assert store.transport.credentials is not None
    assert store.transport.credentials.get_frozen_credentials().access_key == "FROMENV"
    store.transport.close()


@pytest.mark.dynamodb_local
@pytest.mark.usefixtures("no_aws_config")
async def test_dynamodb_local_by_its_url_alone(dynamodb_local: DynamoDBLocal) -> None:
    table = unique_table(TEST_TABLE)
    store = DynamoDBStore(table, endpoint_url=dynamodb_local.endpoint_url)
    admin_of(store).create_table()
    try:
        await store.put(Put({"PK": "a", "SK": "b", "n": 1}))
        assert await store.get(Get({"PK": "a", "SK": "b"})) == {"PK": "a", "SK": "b", "n": 1}
    finally:
        admin.delete_table(store.client, table.name)
        await store.close()


class _Refusing:
    """A boto3 client whose every call fails as botocore fails it."""

    def __init__(self, error: Exception) -> None:
        self.error = error

    def __getattr__(self, name: str) -> Any:
        def call(**_: Any) -> Any:
            raise self.error

        return call


@pytest.mark.parametrize(
    ("error", "said"),
    [
        (
            ClientError(
                {"Error": {"Code": "UnrecognizedClientException", "Message": "bad token"}},
                "DescribeTable",
            ),
            "refused describe .*bad token.*AWS_ACCESS_KEY_ID",
        ),
        (EndpointConnectionError(endpoint_url="http://127.0.0.1:9"), "describe: Could not"),
        (
            ClientError({"Error": {"Code": "LimitExceededException"}}, "CreateTable"),
            "create_table: LimitExceededException",
        ),
    ],
)
def test_table_administration_raises_no_botocore_exception(error: Exception, said: str) -> None:
    control = DynamoDBAdmin(_Refusing(error), TEST_TABLE)
    call = control.create_table if "create_table" in said else control.describe
    with pytest.raises(StoreUnavailable, match=said):
        call()


def test_refused_credentials_on_the_data_plane_say_what_to_check() -> None:
    refused = ServiceError(400, "UnrecognizedClientException", "bad token", {})
    mapped = map_error(refused)
    assert isinstance(mapped, StoreUnavailable)
    assert "AWS_ACCESS_KEY_ID" in str(mapped)
    assert "bad token" in str(mapped)

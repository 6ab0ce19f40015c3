"""The data-plane transport: our SigV4 signature is botocore's for the same request and time,
requests are DynamoDB's JSON 1.0 protocol, errors are parsed from DynamoDB's JSON, answers
are checked against their CRC32, and refreshed credentials are used as they change."""

from __future__ import annotations

import datetime
import itertools
import json
import ssl
import zlib
from typing import Any

import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials, ReadOnlyCredentials, RefreshableCredentials

from keygraph.errors import StoreNotConfigured
from keygraph.stores.dynamodb.connect import make_client, make_transport, transport_for
from keygraph.stores.dynamodb.connections import Connections, Reply
from keygraph.stores.dynamodb.sigv4 import Signer
from keygraph.stores.dynamodb.transport import (
    ServiceError,
    TransientError,
    Transport,
    default_endpoint,
    parse_error,
)

BODY = b'{"TableName":"t","Key":{"PK":{"S":"a"},"SK":{"S":"b"}}}'


def botocore_authorization(
    monkeypatch: pytest.MonkeyPatch,
    url: str,
    headers: dict[str, str],
    credentials: Credentials,
    region: str,
    when: datetime.datetime,
) -> dict[str, str]:
    monkeypatch.setattr("botocore.auth.get_current_datetime", lambda: when)
    request = AWSRequest("POST", url, data=BODY, headers=headers)
    SigV4Auth(credentials, "dynamodb", region).add_auth(request)
    return dict(request.headers.items())


@pytest.mark.parametrize(
    ("url", "host", "token"),
    [
        ("http://127.0.0.1:8000/", "127.0.0.1:8000", None),
        ("https://dynamodb.eu-west-1.amazonaws.com/", "dynamodb.eu-west-1.amazonaws.com", "tok"),
    ],
)
@pytest.mark.parametrize(
    "when",
    [
        datetime.datetime(2026, 11, 22, 23, 59, 59, tzinfo=datetime.UTC),
        datetime.datetime(2026, 11, 23, 0, 0, 1, tzinfo=datetime.UTC),  # a new signing key
    ],
)
def test_signature_is_botocores(
    monkeypatch: pytest.MonkeyPatch, url: str, host: str, token: str | None, when: datetime.datetime
) -> None:
    region = "eu-west-1"
    headers = {
        "Content-Type": "application/x-amz-json-1.0",
        "X-Amz-Target": "DynamoDB_20120810.GetItem",
    }
    signer = Signer(region)
    # A key cached from another day must not leak into this signature.
    signer.sign(dict(headers, Host=host), BODY, ReadOnlyCredentials("AKID", "SECRET", token), 0)
    ours = dict(headers, Host=host)
    signer.sign(ours, BODY, ReadOnlyCredentials("AKID", "SECRET", token), when.timestamp())
    theirs = botocore_authorization(
        monkeypatch, url, headers, Credentials("AKID", "SECRET", token), region, when
    )
    assert ours["Authorization"] == theirs["Authorization"]
    assert ours["X-Amz-Date"] == theirs["X-Amz-Date"]
    assert ours.get("X-Amz-Security-Token") == theirs.get("X-Amz-Security-Token") == token


def test_signature_changes_with_the_secret_and_the_body() -> None:
    signer = Signer("us-east-1")
    signatures = set()
    for secret, body in (("a", BODY), ("b", BODY), ("b", BODY + b" ")):
        headers = {"Host": "h", "X-Amz-Target": "DynamoDB_20120810.GetItem"}
        signer.sign(headers, body, ReadOnlyCredentials("AKID", secret, None), 1.8e9)
        signatures.add(headers["Authorization"])
    assert len(signatures) == 3


class RecordingPool:
    def __init__(self, *replies: tuple[int, bytes, dict[str, str]]) -> None:
        self.replies = list(replies)
        self.requests: list[dict[str, Any]] = []

    async def post(self, head: bytes, body: bytes, *, fresh: bool = False) -> Reply:
        request_line, *lines = head.decode().removesuffix("\r\n\r\n").split("\r\n")
        headers = dict(line.split(": ", 1) for line in lines)
        self.requests.append({"request_line": request_line, "headers": headers, "body": body})
        status, data, answer = self.replies.pop(0) if len(self.replies) > 1 else self.replies[0]
        return Reply(status, answer, data)

    def close(self) -> None:
        pass


def ok(answer: Any, crc: str | None = "true") -> tuple[int, bytes, dict[str, str]]:
    """A 200 answer; `crc` "true" sends the body's CRC32, None no header, else that text."""
    data = json.dumps(answer).encode()
    if crc is None:
        return 200, data, {}
    return 200, data, {"x-amz-crc32": str(zlib.crc32(data)) if crc == "true" else crc}


def transport(pool: RecordingPool, url: str = "http://127.0.0.1:8000") -> Transport:
    return Transport(url, "us-east-1", Credentials("AKID", "SECRET"), pool=pool)


async def test_requests_speak_dynamodb_json() -> None:
    pool = RecordingPool(ok({"Item": {"PK": {"S": "a"}}}))
    params = {"TableName": "t", "Key": {"PK": {"S": "a"}, "B": {"B": "AP8="}}}
    assert await transport(pool).call("GetItem", params) == {"Item": {"PK": {"S": "a"}}}
    (request,) = pool.requests
    assert request["request_line"] == "POST / HTTP/1.1"
    assert json.loads(request["body"]) == params
    headers = request["headers"]
    assert headers["Content-Length"] == str(len(request["body"]))
    assert headers["Content-Type"] == "application/x-amz-json-1.0"
    assert headers["X-Amz-Target"] == "DynamoDB_20120810.GetItem"
    assert headers["Host"] == "127.0.0.1:8000"
    assert headers["Authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKID/")
    assert "/us-east-1/dynamodb/aws4_request" in headers["Authorization"]


def test_default_ports_stay_out_of_the_host() -> None:
    assert transport(RecordingPool(ok({})), "https://example.test:443").host == "example.test"
    assert transport(RecordingPool(ok({})), "http://example.test:8443").host == "example.test:8443"
    assert default_endpoint("eu-north-1") == "https://dynamodb.eu-north-1.amazonaws.com"
    with pytest.raises(ValueError, match="endpoint"):
        transport(RecordingPool(ok({})), "dynamodb.eu-north-1.amazonaws.com")
    with pytest.raises(ValueError, match="no path"):
        transport(RecordingPool(ok({})), "http://example.test/dynamodb")


def test_https_connections_verify_with_botocores_bundle() -> None:
    lean = Transport("https://example.test", "us-east-1", Credentials("AKID", "SECRET"))
    assert isinstance(lean.pool, Connections)
    assert (lean.pool.host, lean.pool.port) == ("example.test", 443)
    assert lean.pool.tls is not None
    assert lean.pool.tls.verify_mode == ssl.CERT_REQUIRED
    assert lean.pool.tls.get_ca_certs()  # botocore's bundle is loaded
    lean.close()


async def test_checksums_are_verified_when_present() -> None:
    assert await transport(RecordingPool(ok({"a": 1}))).call("Query", {}) == {"a": 1}
    assert await transport(RecordingPool(ok({"a": 1}, crc=None))).call("Query", {}) == {"a": 1}
    with pytest.raises(TransientError, match="CRC32"):
        await transport(RecordingPool(ok({"a": 1}, crc="12345"))).call("Query", {})


@pytest.mark.parametrize(
    ("status", "body", "code", "message"),
    [
        (
            400,
            {"__type": "com.amazonaws.dynamodb.v20120810#ValidationException", "message": "m1"},
            "ValidationException",
            "m1",
        ),
        (
            400,
            {"__type": "com.amazonaws.dynamodb.v20120810#TransactionCanceledException",
             "Message": "m2", "CancellationReasons": [{"Code": "None"}]},
            "TransactionCanceledException",
            "m2",
        ),
        (500, {"__type": "com.amazon.coral.service#InternalFailure"}, "InternalFailure",
         "InternalFailure"),
    ],
)  # fmt: skip
async def test_errors_are_read_from_dynamodb_json(
    status: int, body: dict[str, Any], code: str, message: str
) -> None:
    data = json.dumps(body).encode()
    pool = RecordingPool((status, data, {"x-amz-crc32": str(zlib.crc32(data))}))
    with pytest.raises(ServiceError) as raised:
        await transport(pool).call("PutItem", {})
    assert (raised.value.status, raised.value.code, raised.value.message) == (status, code, message)
    assert raised.value.body == body


def test_errors_without_dynamodb_json_are_named_by_status() -> None:
    error = parse_error(502, b"<html>Bad Gateway</html>")
    assert (error.status, error.code, error.body) == (502, "HTTP502", {})
    assert "Bad Gateway" in error.message


async def test_refreshed_credentials_are_used_as_they_change() -> None:
    tokens = (f"token{i}" for i in itertools.count())

    def refresh() -> dict[str, str]:
        # Inside botocore's mandatory refresh window: every use refreshes.
        soon = datetime.datetime.now(datetime.UTC) + datetime.timedelta(minutes=5)
        return {
            "access_key": "AKID",
            "secret_key": "SECRET",
            "token": next(tokens),
            "expiry_time": soon.isoformat(),
        }

    credentials = RefreshableCredentials.create_from_metadata(refresh(), refresh, "test")
    pool = RecordingPool(ok({}))
    lean = Transport("http://127.0.0.1:8000", "us-east-1", credentials, pool=pool)
    await lean.call("GetItem", {})
    await lean.call("GetItem", {})
    sent = [request["headers"]["X-Amz-Security-Token"] for request in pool.requests]
    assert sent == ["token1", "token2"]


def test_transports_from_settings_and_from_clients(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AWS_DEFAULT_REGION", raising=False)
    monkeypatch.delenv("AWS_REGION", raising=False)
    monkeypatch.setenv("AWS_CONFIG_FILE", "/nonexistent")
    aws = make_transport(None, "eu-west-1", 2, "AKID", "SECRET")
    assert (aws.endpoint_url, aws.host) == (
        default_endpoint("eu-west-1"),
        default_endpoint("eu-west-1").removeprefix("https://"),
    )
    assert aws.credentials is not None
    assert aws.credentials.get_frozen_credentials().access_key == "AKID"
    aws.close()
    with pytest.raises(StoreNotConfigured, match="region"):
        make_transport(None, None, 2, "AKID", "SECRET")
    client = make_client("http://127.0.0.1:9", "ap-south-1", 2, "K2", "S2", read_timeout=33)
    local = transport_for(client, 2)
    assert (local.endpoint_url, local.signer.region) == ("http://127.0.0.1:9", "ap-south-1")
    assert local.credentials is not None
    assert local.credentials.get_frozen_credentials().secret_key == "S2"
    assert isinstance(local.pool, Connections)
    assert (local.pool.host, local.pool.port, local.pool.tls) == ("127.0.0.1", 9, None)
    assert (local.pool.read_timeout, local.pool.max_connections) == (33, 2)
    local.close()
    client.close()

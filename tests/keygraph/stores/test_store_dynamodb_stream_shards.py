"""The DynamoDB change stream's view of shards without DynamoDB: DescribeStream read page by
page, lineage ordered parents first, and where the Streams API answers."""

from __future__ import annotations

import json
import zlib
from typing import Any

from botocore.credentials import Credentials

from keygraph.plan import TableDef
from keygraph.stores.dynamodb import connections
from keygraph.stores.dynamodb.store import DynamoDBStore
from keygraph.stores.dynamodb.streams import (
    TARGET_PREFIX,
    DynamoDBChangeStream,
    lineage_order,
    streams_endpoint,
)
from keygraph.stores.dynamodb.transport import Transport
from keygraph.streams import Shard

CREDENTIALS = Credentials("key", "secret")
ARN = "arn:aws:dynamodb:eu-west-1:1:table/t/stream/label"


def shard(shard_id: str, parent: str | None = None, end: str | None = None) -> dict[str, Any]:
    numbers = {"StartingSequenceNumber": "100"} | ({"EndingSequenceNumber": end} if end else {})
    return {"ShardId": shard_id, "SequenceNumberRange": numbers} | (
        {"ParentShardId": parent} if parent else {}
    )


class Pages:
    """Answers DescribeTable and DescribeStream from pages, recording each request."""

    def __init__(self, pages: list[list[dict[str, Any]]]) -> None:
        self.pages = pages
        self.requests: list[dict[str, Any]] = []

    async def post(self, head: bytes, body: bytes, *, fresh: bool = False) -> connections.Reply:
        request = json.loads(body)
        if b"DescribeTable" in head:
            spec = {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
            answer: dict[str, Any] = {
                "Table": {"StreamSpecification": spec, "LatestStreamArn": ARN}
            }
        else:
            assert TARGET_PREFIX.encode() in head
            self.requests.append(request)
            page = len(self.requests) - 1
            description: dict[str, Any] = {"StreamArn": ARN, "Shards": self.pages[page]}
            if page + 1 < len(self.pages):
                description["LastEvaluatedShardId"] = self.pages[page][-1]["ShardId"]
            answer = {"StreamDescription": description}
        data = json.dumps(answer).encode()
        return connections.Reply(200, {"x-amz-crc32": str(zlib.crc32(data))}, data)

    def close(self) -> None:
        pass


async def test_shards_are_read_page_by_page_parents_first() -> None:
    pages = Pages(
        [
            [shard("c1", "b"), shard("a", end="150")],
            [shard("b", "a", end="190"), shard("gone-child", "gone"), shard("c2", "b")],
        ]
    )
    url = "http://127.0.0.1:9"
    data = Transport(url, "eu-west-1", CREDENTIALS, pool=pages)
    streams = Transport(url, "eu-west-1", CREDENTIALS, pool=pages, target_prefix=TARGET_PREFIX)
    store = DynamoDBStore(TableDef("t", "PK", "SK"), transport=data)
    stream = DynamoDBChangeStream(store, transport=streams)
    shards = await stream.shards()
    assert [(s.shard_id, s.parent_id, s.closed) for s in shards] == [
        ("a", None, True),
        ("b", "a", True),
        ("c1", "b", False),
        ("c2", "b", False),
        ("gone-child", "gone", False),
    ]
    assert pages.requests == [
        {"StreamArn": ARN},
        {"StreamArn": ARN, "ExclusiveStartShardId": "a"},
    ]


def test_lineage_puts_every_parent_before_its_children() -> None:
    given = [Shard("d", "c", False), Shard("c", "b", True), Shard("b", None, True)]
    assert [s.shard_id for s in lineage_order(given)] == ["b", "c", "d"]


def test_the_streams_api_has_its_own_host_on_aws_only() -> None:
    assert (
        streams_endpoint("https://dynamodb.eu-west-1.amazonaws.com", "eu-west-1")
        == "https://streams.dynamodb.eu-west-1.amazonaws.com"
    )
    assert streams_endpoint("http://localhost:8000", "ddblocal") == "http://localhost:8000"

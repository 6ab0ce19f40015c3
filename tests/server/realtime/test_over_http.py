"""A subscription sent over HTTP is refused: subscriptions are served over WebSocket."""

from __future__ import annotations

import httpx
import pytest

SUBSCRIPTION = 'subscription { userChanged(id: "VXNlcjp4") { change } }'


@pytest.mark.hand_only("keygraph serve refuses a subscription over HTTP with 405, not 200")
async def test_a_subscription_over_http_is_refused(
    client: httpx.AsyncClient, acme_token: str
) -> None:
    for accept in ("application/json", "multipart/mixed;subscriptionSpec=1.0, application/json"):
        response = await client.post(
            "/graphql",
            json={"query": SUBSCRIPTION},
            headers={"Authorization": f"Bearer {acme_token}", "Accept": accept},
        )
        assert response.status_code == 200
        body = response.json()
        assert body["data"] is None
        assert [e["extensions"]["code"] for e in body["errors"]] == ["BAD_REQUEST"]

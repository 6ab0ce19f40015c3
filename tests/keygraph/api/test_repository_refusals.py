"""Values the domain's models refuse, sent to schema.graphql's mutations on the API compiled
from the spec (`keygraph serve --package generated --extend server.extension`): each is
BAD_USER_INPUT with the message the hand-written server gave (recorded in
recorded/refusals.json, tests/keygraph/api/recordings.py), never INTERNAL, and writes
nothing."""

from __future__ import annotations

from typing import Any

import httpx

from generated.table import TABLE
from keygraph.serve import create_app as serve_app
from keygraph.serve.package import extension_at, served
from keygraph.store import Store
from keygraph.tokens import issue
from tests.conftest import StoreFactory
from tests.keygraph.api.recordings import recorded
from tests.server.fuzz.target import scan

SECRET = "repository-refusals-" + "r" * 32
USER = 'mutation { createUser(input: {email: "ann@example.org", name: "Ann"}) { id } }'
REFUSED = [
    'mutation { createShop(input: {name: "", lat: 0, lng: 0}) { id } }',
    'mutation { createOrgNode(input: {name: ""}) { id } }',
    'mutation { createOrgNode(input: {name: "' + "n" * 5000 + '"}) { id } }',
    """mutation($u: ID!) { addAddress(input: {userId: $u, label: "Home", line1: "1 Main St",
      city: "Berlin", postalCode: "10115", country: "Germany"}) { address { id } } }""",
    """mutation($u: ID!) { addAddress(input: {userId: $u, label: "", line1: "", city: "",
      postalCode: "", country: "de"}) { address { id } } }""",
    'mutation { createUser(input: {email: "", name: ""}) { id } }',
    """mutation($u: ID!) { createOrder(input: {userId: $u, currency: "eur",
      items: [{sku: "", name: "Tea", quantity: 1, unitPriceCents: 1}]}) { id } }""",
]
"""Mutations whose values a model of the domain (or of the spec's writes) refuses."""


async def _answers(app: Any, token: str, store: Any) -> list[tuple[int, list[Any]]]:
    """Each REFUSED document's status and errors (code and message), after a user is made;
    the table the same after each."""
    found = []
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://t") as client:
        headers = {"authorization": f"Bearer {token}"}
        made = await client.post("/graphql", json={"query": USER}, headers=headers)
        user = made.json()["data"]["createUser"]["id"]
        for document in REFUSED:
            before = await scan(store)
            sent = {"query": document, "variables": {"u": user} if "$u" in document else None}
            answer = await client.post("/graphql", json=sent, headers=headers)
            errors = answer.json().get("errors", [])
            found.append(
                (answer.status_code, [(e["extensions"]["code"], e["message"]) for e in errors])
            )
            assert await scan(store) == before, document
    return found


def _serving(store: Store) -> Any:
    """The spec's app on `store`, with the extension, its tokens signed with SECRET."""
    return serve_app(
        served("generated", store, SECRET, [extension_at("server.extension", "generated")])
    )


async def test_values_a_model_refuses_answer_as_the_hand_written_server_did(
    kind: str, store_factory: StoreFactory
) -> None:
    store = await store_factory(kind, TABLE)
    token = issue(SECRET, "t1", "someone", roles=["admin"])
    ours, theirs = recorded("refusals", await _answers(_serving(store), token, store))
    for document, mine, hers in zip(REFUSED, ours, theirs, strict=True):
        assert mine == hers, document
        assert mine[0] == 200, document
        assert [code for code, _ in mine[1]] == ["BAD_USER_INPUT"], document

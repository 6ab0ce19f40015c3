"""Emails compare case-folded and in NFC: two spellings of one email (composed or combining
accents, ß or SS) are one claim, and an email whose key no claim can hold is BAD_USER_INPUT
naming `email`. Run on both stores."""

from __future__ import annotations

from generated.keys import email_claim as email_claim_keys
from generated.models.email_claim import EmailClaim
from keygraph.plan import Delete, Get, Put
from keygraph.store import Store
from server.domain.emails import KEY_MAX_LENGTH
from tests.ids import from_global_id
from tests.server.conftest import Api, refusal

BY_EMAIL = "query($e: String!) { userByEmail(email: $e) { id email } }"
CREATE = 'mutation($e: String!) { createUser(input: {email: $e, name: "N"}) { id } }'
UPDATE = (
    "mutation($id: ID!, $v: Int!, $e: String!) { updateUser(input: "
    "{id: $id, expectedVersion: $v, email: $e}) { id email version } }"
)
DELETE = "mutation($id: ID!) { deleteUser(input: {id: $id, expectedVersion: 1}) { deletedId } }"

SPELLINGS = [
    ("caf\u00e9@x.example", "cafe\u0301@x.example"),  # é composed, e + combining acute
    ("cafe\u0301@y.example", "CAF\u00c9@Y.EXAMPLE"),
    ("stra\u00dfe@x.example", "STRASSE@x.example"),  # ß folds to ss
    ("\u0390@x.example", "\u03aa\u0301@x.example"),  # ΐ, and capital Ϊ with an acute
    ("\u212bngstr\u00f6m@x.example", "\u00e5ngstro\u0308m@x.example"),  # Angstrom sign, å
]
"""Pairs of spellings of one email: the first claimed, the second refused and found."""


async def test_another_spelling_of_a_claimed_email_conflicts_and_finds_its_user(
    store_and_api: tuple[Store, Api],
) -> None:
    _, api = store_and_api
    for first, second in SPELLINGS:
        user = await api.create_user(first)
        error = await refusal(api, CREATE, {"e": second})
        assert error["extensions"]["code"] == "CONFLICT", (first, second, error)
        for spelling in (first, second):
            found = (await api.data(BY_EMAIL, {"e": spelling}))["userByEmail"]
            assert found == {"id": user["id"], "email": first}


async def test_moving_to_another_spelling_of_a_taken_email_conflicts(
    store_and_api: tuple[Store, Api],
) -> None:
    _, api = store_and_api
    await api.create_user("caf\u00e9@x.example")
    other = await api.create_user("other@x.example")
    variables = {"id": other["id"], "v": 1, "e": "CAFE\u0301@x.example"}
    assert (await refusal(api, UPDATE, variables))["extensions"]["code"] == "CONFLICT"
    own = {"id": other["id"], "v": 1, "e": "OTHER@x.example"}
    assert (await api.data(UPDATE, own))["updateUser"]["version"] == 2
    moved = {"id": other["id"], "v": 2, "e": "stra\u00dfe@x.example"}
    await api.data(UPDATE, moved)
    assert (await api.data(BY_EMAIL, {"e": "strasse@X.example"}))["userByEmail"]["id"] == (
        other["id"]
    )
    assert (await api.data(BY_EMAIL, {"e": "other@x.example"}))["userByEmail"] is None
    assert (await api.create_user("Other@x.example"))["email"] == "Other@x.example"


async def test_an_email_whose_key_is_too_long_is_refused_naming_email(
    store_and_api: tuple[Store, Api],
) -> None:
    _, api = store_and_api
    user = await api.create_user("ann@x.example")
    dotted = "\u0130" * 195 + "@x.example"  # 205 characters, each İ folds to two
    assert len(dotted) == 205
    assert len(dotted.casefold()) > KEY_MAX_LENGTH
    over_long = "e" * 251 + "@x.example"  # longer than an email may be
    requests = [
        (CREATE, {"e": dotted}),
        (CREATE, {"e": over_long}),
        (UPDATE, {"id": user["id"], "v": 1, "e": dotted}),
        (UPDATE, {"id": user["id"], "v": 1, "e": over_long}),
        (BY_EMAIL, {"e": dotted}),
        (BY_EMAIL, {"e": "e" * 3000 + "@x.example"}),
    ]
    for query, variables in requests:
        error = await refusal(api, query, variables)
        assert error["extensions"]["code"] == "BAD_USER_INPUT", error
        assert error["message"].startswith(("email", "invalid input: email:")), error
        assert "email_key" not in error["message"], error
    longest = "e" * 244 + "@x.example"  # an email as long as may be, its key as long
    assert (await api.create_user(longest))["email"] == longest
    fits = "\u0130" * 185 + "@x.example"  # 195 characters, its key 380
    assert (await api.create_user(fits))["email"] == fits
    assert (await api.data(BY_EMAIL, {"e": fits.lower()}))["userByEmail"]["email"] == fits
    assert (await api.data(BY_EMAIL, {"e": "ann@x.example"}))["userByEmail"]["id"] == user["id"]


async def test_a_claim_made_before_keys_were_folded_is_still_released(
    store_and_api: tuple[Store, Api],
) -> None:
    """A user whose claim is at its email lower-cased (as claims were once kept) is found by
    its email, can change it, which moves the claim to the folded key, and can be deleted."""
    store, api = store_and_api
    moving = await api.create_user("Stra\u00dfe@x.example")
    leaving = await api.create_user("\u00df@y.example")
    for user in (moving, leaving):
        await store.delete(Delete(email_claim_keys.key("acme", user["email"].casefold())))
        legacy = EmailClaim(email_key=user["email"].lower(), user_id=from_global_id(user["id"])[1])
        await store.put(Put(legacy.to_item("acme")))
    for user in (moving, leaving):
        found = (await api.data(BY_EMAIL, {"e": user["email"]}))["userByEmail"]
        assert found["id"] == user["id"]
    variables = {"id": moving["id"], "v": 1, "e": "STRASSE@x.example"}
    assert (await api.data(UPDATE, variables))["updateUser"]["version"] == 2
    found = (await api.data(BY_EMAIL, {"e": "strasse@x.example"}))["userByEmail"]
    assert found["id"] == moving["id"]
    assert (await api.data(DELETE, {"id": leaving["id"]}))["deleteUser"]["deletedId"]
    for email in ("stra\u00dfe@x.example", "\u00df@y.example", "ss@y.example"):
        assert await store.get(Get(email_claim_keys.key("acme", email), consistent=True)) is None

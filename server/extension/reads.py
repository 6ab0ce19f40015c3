"""The reads this repository's API says beyond its spec, as an extension of the API the
spec compiles to (generated/api.py): the caller from its token, a user by email
(case-folded claims), shops by great-circle distance, a user's addresses and which is its
default, and an org node's parent and ancestors (read by path, a page's in one batch
get); a user asked by id is read with its addresses, a node with the nodes above it, when
the selection asks for them (their look-ahead reads)."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any

from generated.models.address import Address
from generated.queries.org_node import get_org_nodes
from generated.queries.user import get_user, get_users, user_with_addresses
from keygraph.api import ApiContext, Extension, load_many, query_once
from server.domain import emails, shops
from server.domain.addresses import MAX_ADDRESSES
from server.domain.org import MAX_LEVELS

from .refusals import as_api_errors

EXTENSION = Extension('''
"""The caller, as the verified token names it."""
type Viewer {
  tenant: String!
  subject: String
  """The caller's roles, sorted."""
  roles: [String!]!
}

"""A shop and its great-circle distance from the point asked about."""
type ShopDistance {
  shop: Shop!
  distanceKm: Float!
}

extend type User {
  """
  The user's addresses, oldest first (at most 20). Null with FORBIDDEN for a caller who
  may not read them.
  """
  addresses: [Address!]
}

extend type Address {
  """Whether it is its user's default address."""
  isDefault: Boolean!
}

extend type OrgNode {
  """The node above this one; null for a root."""
  parent: OrgNode
  """The nodes from the root down to this node's parent."""
  ancestors: [OrgNode!]!
}

extend type Query {
  """The caller's tenant, subject and roles, from the token."""
  viewer: Viewer!
  """The user holding an email (compared case-folded and in NFC)."""
  userByEmail(email: String!): User
  """
  Shops within radiusKm (0 < radiusKm <= 50) of a point by great-circle distance, nearest
  first; first defaults to 20, at most 100. Null with FORBIDDEN for a caller who may not
  read shops.
  """
  shopsNear(lat: Float!, lng: Float!, radiusKm: Float!, first: Int): [ShopDistance!]
}
''')


@EXTENSION.field("Query.viewer", public=True)
def viewer(_parent: Any, info: Any) -> dict[str, Any]:
    ctx = info.context
    caller = ctx.session.caller
    roles = sorted(caller.roles) if caller is not None else []
    return {"tenant": ctx.tenant, "subject": getattr(caller, "subject", None), "roles": roles}


@EXTENSION.field("Query.userByEmail", guard="get_email_claim")
async def user_by_email(_parent: Any, info: Any, email: str) -> Any:
    ctx = info.context
    with as_api_errors():
        claim = await emails.claim_of_email(ctx.session, ctx.tenant, email)
    if claim is None:
        return None
    return await get_user(ctx.session, ctx.tenant, claim.user_id, consistent=True)


@EXTENSION.field("Query.shopsNear", page=shops.SHOPS_NEAR_PAGE, guard="shops_in_cell")
async def shops_near(
    _parent: Any, info: Any, lat: float, lng: float, radius_km: float, first: int
) -> list[dict[str, Any]]:
    ctx = info.context
    with as_api_errors():
        limit = shops.check_query(lat, lng, radius_km, first)
    near = await shops.shops_near(ctx.session, ctx.tenant, lat, lng, radius_km, limit)
    return [{"shop": record, "distance_km": distance} for distance, record in near]


def _with_addresses(ctx: ApiContext, user_id: str) -> Awaitable[Any]:
    """The user and its addresses, in one Query on its item collection."""
    return query_once(ctx, user_with_addresses, user_id, first=MAX_ADDRESSES + 1)


@EXTENSION.field(
    "User.addresses", most=MAX_ADDRESSES, guard="user_with_addresses", ahead=_with_addresses
)
async def addresses(user: Any, info: Any) -> list[Any]:
    page = await _with_addresses(info.context, user.user_id)
    return [item for item in page.items if isinstance(item, Address)]


@EXTENSION.field("Address.isDefault", public=True)  # whoever reads the address reads this
async def is_default(address: Any, info: Any) -> bool:
    (user,) = await load_many(info.context, get_users, [address.user_id])
    return user is not None and user.default_address_id == address.address_id


def _above(path: Sequence[str]) -> list[Sequence[str]]:
    """The paths of the nodes above a node's, root first."""
    return [path[:end] for end in range(1, len(path))]


def _with_above(ctx: ApiContext, path: Sequence[str]) -> Awaitable[Any]:
    """A node and the nodes above it, in one batch get with the request's others."""
    return load_many(ctx, get_org_nodes, [*_above(path), path])


@EXTENSION.field("OrgNode.parent", guard="get_org_nodes", ahead=_with_above)
async def parent(node: Any, info: Any) -> Any:
    """The parent, when every node above it is still there (a large delete or move may be
    at work below a removed one)."""
    if len(node.path) == 1:
        return None
    above = await load_many(info.context, get_org_nodes, _above(node.path))
    return None if any(found is None for found in above) else above[-1]


@EXTENSION.field("OrgNode.ancestors", most=MAX_LEVELS - 1, guard="get_org_nodes", ahead=_with_above)
async def ancestors(node: Any, info: Any) -> list[Any]:
    above = await load_many(info.context, get_org_nodes, _above(node.path))
    return [found for found in above if found is not None]

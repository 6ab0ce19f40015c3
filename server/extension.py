"""What this repository's API says beyond its spec, as an extension of the API the spec
compiles to (generated/api.py): the caller from its token, a user by email (case-folded
claims), and shops by great-circle distance. `keygraph serve --package generated --extend
server.extension` serves them with the spec's fields."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from generated.queries.user import get_user
from keygraph import errors
from keygraph.api import Extension
from server import errors as domain
from server.domain import emails, shops

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


@contextmanager
def _as_api_errors() -> Iterator[None]:
    """The domain's refusals as the runtime's, so each answers its code at the field."""
    try:
        yield
    except domain.BadUserInput as exc:
        raise errors.BadArgument(str(exc)) from exc
    except domain.NotFound as exc:
        raise errors.NotFound(str(exc)) from exc


@EXTENSION.field("Query.viewer", public=True)
def viewer(_parent: Any, info: Any) -> dict[str, Any]:
    ctx = info.context
    caller = ctx.session.caller
    roles = sorted(caller.roles) if caller is not None else []
    return {"tenant": ctx.tenant, "subject": getattr(caller, "subject", None), "roles": roles}


@EXTENSION.field("Query.userByEmail", guard="get_email_claim")
async def user_by_email(_parent: Any, info: Any, email: str) -> Any:
    ctx = info.context
    with _as_api_errors():
        claim = await emails.claim_of_email(ctx.session, ctx.tenant, email)
    if claim is None:
        return None
    return await get_user(ctx.session, ctx.tenant, claim.user_id, consistent=True)


@EXTENSION.field("Query.shopsNear", page=shops.SHOPS_NEAR_PAGE, guard="shops_in_cell")
async def shops_near(
    _parent: Any, info: Any, lat: float, lng: float, radius_km: float, first: int
) -> list[dict[str, Any]]:
    ctx = info.context
    with _as_api_errors():
        limit = shops.check_query(lat, lng, radius_km, first)
    near = await shops.shops_near(ctx.session, ctx.tenant, lat, lng, radius_km, limit)
    return [{"shop": record, "distance_km": distance} for distance, record in near]

"""Root fields for users: by id, by email, the tenant's users; create and update."""

from __future__ import annotations

import strawberry

from generated import authz
from generated.queries.user import get_user, list_users
from server.authz import require
from server.domain import emails, users
from server.domain.addresses import user_and_addresses
from server.graphql import lookahead, prefetch
from server.graphql.context import Info
from server.graphql.types.connection import Connection, connection_from_page
from server.graphql.types.node import lookup_id
from server.graphql.types.payloads import DeleteInput, DeletePayload, delete, local_id_of
from server.graphql.types.user import User, load_user


@strawberry.input(description="A new user; the email must be unused in the tenant.")
class CreateUserInput:
    email: str
    name: str


@strawberry.input(description="Changes to a user, checked against the version last read.")
class UpdateUserInput:
    id: strawberry.ID
    expected_version: int
    name: str | None = None
    email: str | None = None


@strawberry.type
class UserQuery:
    @strawberry.field(description="A user by id; null when there is none.")
    async def user(self, info: Info, id: strawberry.ID) -> User | None:
        user_id = lookup_id(id, "User")
        if user_id is None:
            return None
        ctx = info.context
        if not lookahead.selects_any(info, ("addresses", "defaultAddress")) or not (
            authz.may_run_user_with_addresses(ctx.caller, user_id=user_id)
        ):
            return await load_user(ctx, user_id)
        model, addresses = await user_and_addresses(ctx.session, ctx.tenant, user_id)
        return None if model is None else User.from_model(model, ctx.caller, addresses)

    @strawberry.field(description="The user holding an email (compared case-folded and in NFC).")
    async def user_by_email(self, info: Info, email: str) -> User | None:
        ctx = info.context
        require(authz.may_run_get_email_claim(ctx.caller), "look users up by email")
        claim = await emails.claim_of_email(ctx.session, ctx.tenant, email)
        if claim is None:
            return None
        model = await get_user(ctx.session, ctx.tenant, claim.user_id, consistent=True)
        return None if model is None else User.from_model(model, ctx.caller)

    @strawberry.field(
        description="The tenant's users, oldest first; null with FORBIDDEN for a caller who "
        "may not list them."
    )
    async def users(
        self, info: Info, first: int | None = None, after: str | None = None
    ) -> Connection[User] | None:
        ctx = info.context
        require(authz.may_run_list_users(ctx.caller), "list users")
        page = await list_users(ctx.session, ctx.tenant, first=first, after=after)
        await prefetch.user_fields(info, page.items)
        caller = ctx.caller
        return connection_from_page(page, lambda model: User.from_model(model, caller))


@strawberry.type
class UserMutation:
    @strawberry.mutation(description="Create a user; the email must be unused in the tenant.")
    async def create_user(self, info: Info, input: CreateUserInput) -> User:
        ctx = info.context
        require(authz.may_create_user(ctx.caller), "create users")
        model = await users.create_user(ctx.server_session, ctx.tenant, input.email, input.name)
        return User.from_model(model, ctx.caller)

    @strawberry.mutation(description="Update a user; a stale expectedVersion is a CONFLICT.")
    async def update_user(self, info: Info, input: UpdateUserInput) -> User:
        ctx = info.context
        user_id = local_id_of(input.id, "User")
        require(authz.may_update_user(ctx.caller, user_id=user_id), "update this user")
        model = await users.update_user(
            ctx.server_session,
            ctx.tenant,
            user_id,
            input.expected_version,
            name=input.name,
            email=input.email,
        )
        return User.from_model(model, ctx.caller)

    @strawberry.mutation(
        description="Delete a user: its email is free at once; its addresses, memberships "
        "and orders go with it."
    )
    async def delete_user(self, info: Info, input: DeleteInput) -> DeletePayload:
        return await delete(
            info,
            input,
            "User",
            authz.may_delete_user,
            "delete this user",
            users.delete_user,
            owner="user_id",
        )

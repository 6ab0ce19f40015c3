"""An extension of the social case's API (tests/codegen/cases/social), as a team writes one
for what its spec cannot say: a computed field on a generated type, root fields answering
generated objects, a connection and a type of its own, a mutation. `extension(package)`
makes it for the package the spec was compiled into, as `keygraph serve --extend` does."""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from keygraph.api import Extension, PageSize
from keygraph.caller import Caller
from keygraph.writes import update

SDL = """
extend type Member {
  "Its name and handle, as a greeting shows them."
  greeting: String!
}

type PostStats {
  count: Int!
  longest: Post
}

input Rename {
  memberId: ID!
  newName: String!
}

extend type Query {
  latestPosts(memberId: ID!, first: Int): [Post!]!
  postStats(memberId: ID!): PostStats
  draftText(memberId: ID!, draftId: ID!): String
  sloppyPosts(memberId: ID!): [Post!]!
  postPages(memberId: ID!, first: Int, after: String): PostConnection!
}

extend type Mutation {
  renameMember(rename: Rename!): Member
}
"""
LATEST_PAGE = PageSize(default=2, maximum=5)


def may_rename(caller: Caller, *, rename: dict[str, Any]) -> bool:
    """An admin, or the member itself."""
    return "admin" in caller.roles or caller.owns(rename["member_id"])


def extension(package: ModuleType) -> Extension:
    """The extension over `package`, the social case compiled."""
    queries = importlib.import_module(f"{package.__name__}.queries")
    api = importlib.import_module(f"{package.__name__}.api").API
    extended = Extension(SDL)

    @extended.field("Member.greeting", public=True)
    def greeting(member: Any, _info: Any) -> str:
        return f"Hello, {member.name} (@{member.handle})"

    @extended.field("Query.latestPosts", page=LATEST_PAGE, guard="posts_by")
    async def latest_posts(_: Any, info: Any, member_id: str, first: int) -> list[Any]:
        ctx = info.context
        return list((await queries.posts_by(ctx.session, ctx.tenant, member_id, first=first)).items)

    @extended.field("Query.postStats", guard="posts_by")
    async def post_stats(_: Any, info: Any, member_id: str) -> dict[str, Any]:
        ctx = info.context
        posts = (await queries.posts_by(ctx.session, ctx.tenant, member_id, first=100)).items
        longest = max(posts, key=lambda post: len(post.text), default=None)
        shown = None if longest is None else longest.model_dump()  # made a Post again
        return {"count": len(posts), "longest": shown}

    @extended.field("Query.draftText", guard="get_draft")
    async def draft_text(_: Any, info: Any, member_id: str, draft_id: str) -> str | None:
        ctx = info.context
        draft = await queries.get_draft(ctx.session, ctx.tenant, member_id, draft_id)
        return None if draft is None else str(draft.text)

    @extended.field("Query.sloppyPosts", most=1, public=True)
    async def sloppy_posts(_: Any, info: Any, member_id: str) -> list[Any]:
        ctx = info.context
        return list((await queries.posts_by(ctx.session, ctx.tenant, member_id)).items)

    @extended.field("Query.postPages", page=LATEST_PAGE, guard="posts_by")
    async def post_pages(
        _: Any, info: Any, member_id: str, first: int, after: str | None = None
    ) -> Any:
        ctx = info.context
        return await queries.posts_by(ctx.session, ctx.tenant, member_id, first=first, after=after)

    @extended.field("Mutation.renameMember", guard=may_rename)
    async def rename_member(_: Any, info: Any, rename: dict[str, Any]) -> dict[str, Any] | None:
        ctx, key = info.context, {"member_id": rename["member_id"]}
        member = await queries.get_member(ctx.session, ctx.tenant, rename["member_id"])
        if member is None:
            return None
        changes = {"name": rename["new_name"]}
        renamed = await update(
            ctx.session, ctx.tenant, api.writes["Member"], key, changes, member.version
        )
        return dict(renamed.model_dump())  # a dict: answered as the Member it holds

    return extended

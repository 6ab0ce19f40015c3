"""The guard call each generated query function makes before any store call, in a spec with
access rules."""

from __future__ import annotations

from . import rules
from .resolve import Resolved


def pattern_guard(resolved: Resolved, name: str, params: dict[str, str], batch: bool) -> str:
    """The call of pattern `name`'s guard on the session's caller, each owner given by the
    expression `params` names for it (in a batch, the same for every `ref`); "" for a spec
    without rules."""
    authorization = resolved.spec.authorization
    text = resolved.spec.patterns[name].allow
    if authorization is None or text is None:
        return ""
    named = {n: rules.parse(t) for n, t in authorization.rules.items()}
    owners = rules.owners(rules.expand(rules.parse(text), named))
    given = "".join(f", {owner}={params[owner]}" for owner in owners)
    call = f"_authz.may_run_{name}(s.caller{given})"
    return f"all({call} for ref in refs)" if batch and owners else call

"""Lowering of the checked rules to guard functions (generated/authz.py) and the table of
who may do what (generated/AUTHORIZATION.md)."""

from __future__ import annotations

from . import rules
from .authz import OPERATIONS, Rules
from .ir import AccessRowIR, AuthorizationIR, GuardIR
from .pytypes import snake
from .resolve import Resolved
from .rules import Rule


def _guard(name: str, doc: str, rule: Rule) -> GuardIR:
    owners = rules.owners(rule)
    params = ", ".join(
        ["caller: Caller", *(["*"] if owners else []), *(f"{o}: str" for o in owners)]
    )
    return GuardIR(name, doc, params, rules.python(rule, {o: o for o in owners}))


def _who(resolved: Resolved, path: tuple[str, ...]) -> str:
    """The rule as written in the spec (named rules by name), for people to read."""
    authorization = resolved.spec.authorization
    assert authorization is not None
    if path[0] == "patterns":
        text = resolved.spec.patterns[path[1]].allow
    else:
        access = resolved.spec.entities[path[1]].access
        assert access is not None
        if path[2] == "attributes":
            text = access.attributes[path[3]]
        else:
            text = getattr(access, path[2]) or access.default
    assert text is not None
    return rules.text(rules.parse(text)).replace("|", "\\|")


def pattern_who(resolved: Resolved, name: str) -> str:
    """Who may run pattern `name`, as AUTHORIZATION.md and the worksheet say it."""
    return _who(resolved, ("patterns", name))


def lower_authorization(resolved: Resolved, checked: Rules) -> AuthorizationIR:
    authorization = resolved.spec.authorization
    assert authorization is not None
    guards: list[GuardIR] = []
    rows: list[AccessRowIR] = []
    for entity_name, entity in resolved.entities.items():
        module = snake(entity_name)
        for operation in OPERATIONS:
            rule = checked.entities[(entity_name, operation)]
            guard = _guard(f"may_{operation}_{module}", f"{operation} {entity_name} items", rule)
            guards.append(guard)
            who = _who(resolved, ("entities", entity_name, operation))
            rows.append(AccessRowIR(entity_name, operation, who, guard.name))
        for attribute in entity.attrs:
            own = checked.attributes.get((entity_name, attribute))
            if own is None:
                who = f"as {entity_name} read"
                name = f"may_read_{module}"
            else:
                guard = _guard(
                    f"may_read_{module}_{attribute}", f"read {entity_name}.{attribute}", own
                )
                guards.append(guard)
                who = _who(resolved, ("entities", entity_name, "attributes", attribute))
                name = guard.name
            rows.append(AccessRowIR(f"{entity_name}.{attribute}", "read", who, name))
    for pattern_name in resolved.spec.patterns:
        rule = checked.patterns[pattern_name]
        guard = _guard(f"may_run_{pattern_name}", f"run {pattern_name}", rule)
        guards.append(guard)
        rows.append(
            AccessRowIR(
                f"pattern `{pattern_name}`", "run", pattern_who(resolved, pattern_name), guard.name
            )
        )
    named = tuple(
        (name, rules.text(rules.parse(text))) for name, text in authorization.rules.items()
    )
    return AuthorizationIR(repr(tuple(authorization.roles)), named, tuple(guards), tuple(rows))

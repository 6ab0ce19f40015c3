"""The rule language: parsing, writing back, and the Python it compiles to, which must
decide as the rule reads for every caller."""

from __future__ import annotations

import itertools
import re

import pytest

from codegen import rules
from codegen.rules import RuleError
from keygraph.caller import Caller


@pytest.mark.parametrize(
    "text",
    [
        'role = "admin"',
        'owner = "user_id"',
        'claim.dept = "sales"',
        'claim.dept != "sales"',
        "anyone",
        "nobody",
        "staff",
        'not role = "member"',
        'role = "a" or role = "b" and owner = "user_id"',
        '(role = "a" or role = "b") and not (owner = "user_id" or claim.x = "y")',
    ],
)
def test_a_rule_writes_back_as_it_parses(text: str) -> None:
    rule = rules.parse(text)
    assert rules.parse(rules.text(rule)) == rule


def test_and_binds_tighter_than_or() -> None:
    rule = rules.parse('role = "a" or role = "b" and owner = "u"')
    assert rule == rules.AnyOf((rules.Role("a"), rules.AllOf((rules.Role("b"), rules.Owner("u")))))


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "expected more"),
        ("role = admin", "quoted"),
        ('role "admin"', "expected '='"),
        ('role = "a" or', "expected more"),
        ('(role = "a"', "expected ')'"),
        ('role = "a")', "after a complete rule"),
        ('claim. = "x"', "claim name"),
        ('claim.x < "1"', "cannot read '<"),
        ('claim.x ( "1"', "expected = or !="),
        ('role = "a" && owner = "u"', "cannot read"),
        ("and", "unexpected 'and'"),
    ],
)
def test_a_malformed_rule_says_what_was_expected(text: str, message: str) -> None:
    with pytest.raises(RuleError, match=re.escape(message)):
        rules.parse(text)


def _decide(rule: rules.Rule, caller: Caller, owner_values: dict[str, str]) -> bool:
    """The rule read as written: what the compiled expression must agree with."""
    if isinstance(rule, rules.Const):
        return rule.value
    if isinstance(rule, rules.Role):
        return rule.name in caller.roles
    if isinstance(rule, rules.Owner):
        return caller.subject is not None and owner_values[rule.attribute] == caller.subject
    if isinstance(rule, rules.Claim):
        value = caller.claims.get(rule.name)
        return value is not None and (value == rule.value) == rule.equal
    if isinstance(rule, rules.Not):
        return not _decide(rule.operand, caller, owner_values)
    if isinstance(rule, rules.AllOf):
        return all(_decide(o, caller, owner_values) for o in rule.operands)
    assert isinstance(rule, rules.AnyOf)
    return any(_decide(o, caller, owner_values) for o in rule.operands)


NAMED = {"staff": rules.parse('role = "admin" or (role = "auditor" and claim.region != "none")')}
RULES = [
    'staff or (role = "member" and owner = "user_id")',
    'not staff and owner = "user_id" and not claim.suspended = "yes"',
    'owner = "user_id" or owner = "other_id"',
    'not (role = "member" or claim.region = "eu")',
]
CALLERS = [
    Caller(subject, frozenset(roles), claims)
    for subject, roles, claims in itertools.product(
        (None, "u1", "u2"),
        ((), ("admin",), ("member",), ("auditor",), ("member", "auditor")),
        ({}, {"region": "eu"}, {"region": "none"}, {"suspended": "yes"}),
    )
]


@pytest.mark.parametrize("text", RULES)
def test_the_compiled_rule_decides_as_the_rule_reads(text: str) -> None:
    rule = rules.expand(rules.parse(text), NAMED)
    owners = rules.owners(rule)
    source = rules.python(rule, {o: o for o in owners})
    guard = eval(f"lambda caller, {', '.join(owners)}: {source}")
    for caller in CALLERS:
        for values in itertools.product(("u1", "u2"), repeat=len(owners)):
            bound = dict(zip(owners, values, strict=True))
            assert guard(caller, *values) == _decide(rule, caller, bound), (caller, bound)

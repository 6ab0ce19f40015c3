"""The authorization rule language: parsing a rule's text into a tree, and writing the tree
back as text (for AUTHORIZATION.md) and as a Python expression (for generated/authz.py).

    rule   := or
    or     := and ("or" and)*
    and    := unary ("and" unary)*
    unary  := "not" unary | atom
    atom   := "(" rule ")" | "anyone" | "nobody"
            | "role" "=" STRING              the caller has the role
            | "owner" "=" STRING             the named attribute equals the caller's `sub`
            | "claim." NAME ("=" | "!=") STRING   another claim of the token; a token
                                              without the claim satisfies neither
            | NAME                           a named rule of [authorization.rules]
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_TOKEN = re.compile(
    r"""\s*(?:(?P<string>"[^"\\]*")|(?P<op>!=|=|\(|\))|(?P<word>[A-Za-z_][A-Za-z0-9_.:-]*))"""
)
_KEYWORDS = frozenset({"and", "or", "not", "role", "owner", "anyone", "nobody"})


class RuleError(ValueError):
    """A rule that does not parse; the message says where and what was expected."""


@dataclass(frozen=True, slots=True)
class Const:
    value: bool


@dataclass(frozen=True, slots=True)
class Role:
    name: str


@dataclass(frozen=True, slots=True)
class Owner:
    attribute: str


@dataclass(frozen=True, slots=True)
class Claim:
    name: str
    equal: bool
    value: str


@dataclass(frozen=True, slots=True)
class Ref:
    name: str


@dataclass(frozen=True, slots=True)
class Not:
    operand: Rule


@dataclass(frozen=True, slots=True)
class AllOf:
    operands: tuple[Rule, ...]


@dataclass(frozen=True, slots=True)
class AnyOf:
    operands: tuple[Rule, ...]


Rule = Const | Role | Owner | Claim | Ref | Not | AllOf | AnyOf


def _tokens(text: str) -> list[str]:
    tokens: list[str] = []
    position = 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None:
            raise RuleError(f"cannot read {text[position:].strip()[:20]!r}")
        tokens.append(match.group(match.lastgroup or "word"))
        position = match.end()
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _tokens(text)
        self.at = 0

    def peek(self) -> str | None:
        return self.tokens[self.at] if self.at < len(self.tokens) else None

    def take(self, expected: str | None = None) -> str:
        token = self.peek()
        if token is None or (expected is not None and token != expected):
            wanted = repr(expected) if expected else "more"
            found = "the end" if token is None else repr(token)
            raise RuleError(f"expected {wanted}, found {found}")
        self.at += 1
        return token

    def rule(self) -> Rule:
        operands = [self.conjunction()]
        while self.peek() == "or":
            self.take()
            operands.append(self.conjunction())
        return operands[0] if len(operands) == 1 else AnyOf(tuple(operands))

    def conjunction(self) -> Rule:
        operands = [self.unary()]
        while self.peek() == "and":
            self.take()
            operands.append(self.unary())
        return operands[0] if len(operands) == 1 else AllOf(tuple(operands))

    def unary(self) -> Rule:
        if self.peek() == "not":
            self.take()
            return Not(self.unary())
        return self.atom()

    def string(self) -> str:
        token = self.take()
        if not token.startswith('"'):
            raise RuleError(f'expected a "quoted" value, found {token!r}')
        return token[1:-1]

    def atom(self) -> Rule:
        token = self.take()
        if token == "(":
            inner = self.rule()
            self.take(")")
            return inner
        if token in ("anyone", "nobody"):
            return Const(token == "anyone")
        if token in ("role", "owner"):
            self.take("=")
            value = self.string()
            return Role(value) if token == "role" else Owner(value)
        if token.startswith("claim."):
            name = token.removeprefix("claim.")
            if not name:
                raise RuleError("claim. needs a claim name, as in claim.department")
            op = self.take()
            if op not in ("=", "!="):
                raise RuleError(f"expected = or != after {token}, found {op!r}")
            return Claim(name, op == "=", self.string())
        if token in _KEYWORDS or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", token):
            raise RuleError(f"unexpected {token!r}")
        return Ref(token)


def parse(text: str) -> Rule:
    """The rule's tree; RuleError when the text is not a rule."""
    parser = _Parser(text)
    rule = parser.rule()
    if parser.peek() is not None:
        raise RuleError(f"unexpected {parser.peek()!r} after a complete rule")
    return rule


def walk(rule: Rule) -> list[Rule]:
    """The rule and every rule inside it."""
    found: list[Rule] = [rule]
    if isinstance(rule, Not):
        found += walk(rule.operand)
    elif isinstance(rule, AllOf | AnyOf):
        for operand in rule.operands:
            found += walk(operand)
    return found


def expand(rule: Rule, named: dict[str, Rule]) -> Rule:
    """The rule with every named rule it refers to written in its place (named rules are
    checked to exist and not to refer to themselves before this)."""
    if isinstance(rule, Ref):
        return expand(named[rule.name], named)
    if isinstance(rule, Not):
        return Not(expand(rule.operand, named))
    if isinstance(rule, AllOf):
        return AllOf(tuple(expand(o, named) for o in rule.operands))
    if isinstance(rule, AnyOf):
        return AnyOf(tuple(expand(o, named) for o in rule.operands))
    return rule


def owners(rule: Rule) -> list[str]:
    """The attributes the rule's owner conditions name, in order, once each."""
    found: list[str] = []
    for part in walk(rule):
        if isinstance(part, Owner) and part.attribute not in found:
            found.append(part.attribute)
    return found


def text(rule: Rule, inner: bool = False) -> str:
    """The rule written out, with as few parentheses as it needs."""
    if isinstance(rule, Const):
        return "anyone" if rule.value else "nobody"
    if isinstance(rule, Role):
        return f'role = "{rule.name}"'
    if isinstance(rule, Owner):
        return f'owner = "{rule.attribute}"'
    if isinstance(rule, Claim):
        return f'claim.{rule.name} {"=" if rule.equal else "!="} "{rule.value}"'
    if isinstance(rule, Ref):
        return rule.name
    if isinstance(rule, Not):
        return f"not {text(rule.operand, True)}"
    joiner = " and " if isinstance(rule, AllOf) else " or "
    written = joiner.join(text(o, True) for o in rule.operands)
    return f"({written})" if inner else written


def python(rule: Rule, params: dict[str, str]) -> str:
    """The rule as a Python expression over `caller` (a keygraph.caller.Caller) and the
    parameters `params` names for each owner attribute; named rules already expanded."""
    if isinstance(rule, Const):
        return repr(rule.value)
    if isinstance(rule, Role):
        return f"{rule.name!r} in caller.roles"
    if isinstance(rule, Owner):
        return f"caller.owns({params[rule.attribute]})"
    if isinstance(rule, Claim):
        if rule.equal:
            return f"caller.claim({rule.name!r}) == {rule.value!r}"
        return f"caller.claim({rule.name!r}) not in (None, {rule.value!r})"
    if isinstance(rule, Ref):
        raise ValueError(f"named rule {rule.name} not expanded")
    if isinstance(rule, Not):
        operand = rule.operand
        written = python(operand, params)
        return f"not {written}" if isinstance(operand, Const | Owner) else f"not ({written})"
    joiner = " and " if isinstance(rule, AllOf) else " or "
    return joiner.join(
        f"({python(o, params)})" if isinstance(o, AllOf | AnyOf) else python(o, params)
        for o in rule.operands
    )

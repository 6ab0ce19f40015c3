"""The spec's authorization rules, parsed and checked: every entity operation, attribute
read and pattern with its rule (deny by default), roles and named rules that exist, and
owner conditions a pattern can decide from its key arguments, before any read."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field

from . import fixes, keytemplate, rules
from .diagnostics import Edit, Problem
from .implication import implies
from .lower_queries import sort_templates
from .resolve import Entity, Resolved
from .rules import Rule, RuleError
from .spec import PatternSpec, Spec

OPERATIONS = ("read", "create", "update", "delete")
_OWNER_TYPES = ("id", "string")


@dataclass(slots=True)
class Rules:
    """Every rule of an authorized spec, named rules expanded, by what it guards."""

    roles: tuple[str, ...]
    named: dict[str, Rule] = field(default_factory=dict)
    entities: dict[tuple[str, str], Rule] = field(default_factory=dict)
    """(entity, operation) -> rule."""
    attributes: dict[tuple[str, str], Rule] = field(default_factory=dict)
    """(entity, attribute) -> its own read rule (attributes without one have the entity's)."""
    patterns: dict[str, Rule] = field(default_factory=dict)


def key_arguments(pattern: PatternSpec, resolved: Resolved) -> list[str]:
    """The placeholders a pattern's key binds from its arguments (the tenant aside)."""
    if pattern.operation in ("get", "batch_get"):
        entity = resolved.entities[str(pattern.entity)]
        table = resolved.spec.table
        templates = [entity.keys[table.partition_key], entity.keys[table.sort_key]]
    else:
        templates = [keytemplate.parse(str(pattern.partition))]
        templates += sort_templates(pattern.sort)[1]
    shard = pattern.shards.placeholder if pattern.shards else None
    found: list[str] = []
    for template in templates:
        for name in template.placeholders:
            if name not in ("tenant", shard) and name not in found:
                found.append(name)
    return found


class _Collector:
    def __init__(self, resolved: Resolved) -> None:
        self.resolved = resolved
        self.problems: list[Problem] = []
        authorization = resolved.spec.authorization
        assert authorization is not None
        self.rules = Rules(tuple(authorization.roles))
        self.written: dict[str, Rule] = {}
        self.texts: dict[str, str] = {}
        self.broken: set[str] = set()
        """Named rules with problems of their own: a rule using one is not reported again."""
        """The text of each rule parsed, by TOML path."""

    def parse(self, path: str, text: str) -> Rule | None:
        """The rule, or None (its problems noted) when it does not parse or names an
        unknown role or named rule."""
        before = len(self.problems)
        self.texts[path] = text
        try:
            rule = rules.parse(text)
        except RuleError as exc:
            message = f"not a rule: {exc} (the rule language: docs/spec.md, 'Authorization rules')"
            self.problems.append(Problem(path, message))
            return None
        roles = self.rules.roles
        broken = False
        for part in rules.walk(rule):
            if isinstance(part, rules.Role) and part.name not in roles:
                close = difflib.get_close_matches(part.name, roles, n=1)
                pattern = rf'(role\s*=\s*)"{re.escape(part.name)}"'
                self.problems.append(
                    Problem(
                        path,
                        f'role "{part.name}" is not one of [authorization] roles '
                        f"({', '.join(roles)}): "
                        + (f'did you mean "{close[0]}"?' if close else "fix it or add the role"),
                        fix=_rule_fix(path, re.sub(pattern, rf'\1"{close[0]}"', text))
                        if close
                        else (),
                    )
                )
            if isinstance(part, rules.Ref) and part.name in self.broken:
                broken = True
            elif isinstance(part, rules.Ref) and part.name not in self.written:
                known = ", ".join(sorted(self.written)) or "none"
                close = difflib.get_close_matches(part.name, sorted(self.written), n=1)
                pattern = rf'(?<!["\w.]){re.escape(part.name)}(?![\w"])'
                self.problems.append(
                    Problem(
                        path,
                        f"{part.name!r} is no named rule (named rules: {known}); "
                        + (
                            f"did you mean {close[0]!r}?"
                            if close
                            else "define it under [authorization.rules] or quote a value"
                        ),
                        fix=_rule_fix(path, re.sub(pattern, close[0], text)) if close else (),
                    )
                )
        return rule if len(self.problems) == before and not broken else None

    def named(self) -> None:
        authorization = self.resolved.spec.authorization
        assert authorization is not None
        texts = authorization.rules
        self.written = {name: rules.Const(False) for name in texts}
        parsed = {
            name: self.parse(f"authorization.rules.{name}", text) for name, text in texts.items()
        }
        self.written = {name: rule for name, rule in parsed.items() if rule is not None}
        self.broken = {name for name, rule in parsed.items() if rule is None}
        for name in self.written:
            if self._refers_to(name, name, set()):
                self.problems.append(
                    Problem(
                        f"authorization.rules.{name}",
                        "the rule refers to itself (through named rules): write it out",
                    )
                )
        if not self.problems:
            self.rules.named = {n: rules.expand(r, self.written) for n, r in self.written.items()}

    def _refers_to(self, start: str, target: str, seen: set[str]) -> bool:
        for part in rules.walk(self.written.get(start, rules.Const(False))):
            if isinstance(part, rules.Ref) and part.name in self.written:
                if part.name == target:
                    return True
                if part.name not in seen:
                    seen.add(part.name)
                    if self._refers_to(part.name, target, seen):
                        return True
        return False

    def expanded(self, path: str, text: str) -> Rule | None:
        """The rule with named rules written in; as written when a named rule is broken
        (its owners are still checked; nothing is generated from a spec with problems)."""
        rule = self.parse(path, text)
        if rule is None or len(self.rules.named) != len(self.written):
            return rule
        return rules.expand(rule, self.written)

    def owners_of_entity(self, path: str, rule: Rule, entity: Entity) -> None:
        for name in rules.owners(rule):
            attr = entity.attrs.get(name)
            if attr is None or attr.spec.type not in _OWNER_TYPES:
                usable = [n for n, a in entity.attrs.items() if a.spec.type in _OWNER_TYPES]
                close = difflib.get_close_matches(name, usable, n=1)
                self.problems.append(
                    Problem(
                        path,
                        f'owner = "{name}" names no id or string attribute of {entity.name}: '
                        "name the attribute that holds the owner's user id (of "
                        + (", ".join(usable) or "none")
                        + ")",
                        fix=self._owner_fix(path, name, close[0]) if close else (),
                    )
                )

    def _owner_fix(self, path: str, old: str, new: str) -> tuple[Edit, ...]:
        """The rule written at `path` with owner `old` renamed `new`, when it names it."""
        text = self.texts.get(path, "")
        pattern = rf'(owner\s*=\s*)"{re.escape(old)}"'
        return _rule_fix(path, re.sub(pattern, rf'\1"{new}"', text)) if text else ()

    def entity(self, name: str, entity: Entity) -> None:
        access = entity.spec.access
        path = f"entities.{name}"
        if access is None:
            self.problems.append(
                Problem(
                    path,
                    "no access rules, so nobody may read or write it (deny by default): add "
                    f"[{path}.access] with read, create, update and delete rules "
                    '(default = "nobody" for an entity only the server touches)',
                )
            )
            return
        for operation in OPERATIONS:
            text = getattr(access, operation) or access.default
            where = f"{path}.access.{operation if getattr(access, operation) else 'default'}"
            if text is None:
                self.problems.append(
                    Problem(
                        f"{path}.access",
                        f"no {operation} rule, so nobody may {operation} it (deny by "
                        f'default): add {operation} = "<rule>" or default = "<rule>" '
                        '("nobody" to say so)',
                    )
                )
                continue
            rule = self.expanded(where, text)
            if rule is not None:
                self.owners_of_entity(where, rule, entity)
                self.rules.entities[(name, operation)] = rule
        for attribute, text in access.attributes.items():
            where = f"{path}.access.attributes.{attribute}"
            if attribute not in entity.attrs:
                self.problems.append(
                    Problem(
                        where,
                        f"{name} has no attribute {attribute!r}; name one of: "
                        + ", ".join(entity.attrs),
                    )
                )
                continue
            rule = self.expanded(where, text)
            if rule is not None:
                self.owners_of_entity(where, rule, entity)
                self.rules.attributes[(name, attribute)] = rule

    def pattern(self, name: str, pattern: PatternSpec) -> None:
        path = f"patterns.{name}"
        if pattern.allow is None:
            self.problems.append(
                Problem(
                    path,
                    "no allow rule, so nobody may run it (deny by default): add "
                    'allow = "<rule>" ("nobody" for a pattern only the server runs)',
                )
            )
            return
        rule = self.expanded(f"{path}.allow", pattern.allow)
        if rule is None:
            return
        bound = key_arguments(pattern, self.resolved)
        unbound = [owner for owner in rules.owners(rule) if owner not in bound]
        for owner in unbound:
            self.problems.append(
                Problem(
                    f"{path}.allow",
                    f'owner = "{owner}" names no argument of the pattern\'s key (it '
                    f"binds: {', '.join(bound) or 'none'}), so it could only be enforced "
                    "by filtering items after the read: bind the owner in the key, or "
                    "restrict the pattern to roles",
                )
            )
        self.rules.patterns[name] = rule
        if not unbound:
            self._within_reads(name, pattern, rule, frozenset(bound))

    def _within_reads(
        self, name: str, pattern: PatternSpec, rule: Rule, bound: frozenset[str]
    ) -> None:
        """A problem for each entity the pattern returns whose read rule refuses a caller
        the pattern's rule lets in."""
        for entity in dict.fromkeys(
            [*([pattern.entity] if pattern.entity else []), *pattern.returns]
        ):
            read = self.rules.entities.get((entity, "read"))
            if read is not None and not implies(rule, read, bound):
                self.problems.append(
                    Problem(
                        f"patterns.{name}.allow",
                        f"lets callers run it whom {entity}'s read rule refuses, which only "
                        "filtering items after the read could enforce: narrow allow to "
                        f"what {entity}'s read rule allows, or bind its owner in the key",
                    )
                )


def _rule_fix(path: str, text: str) -> tuple[Edit, ...]:
    section, key = fixes.at(path)
    return (Edit(section, key, fixes.rule(text)),)


def _roles_named(texts: list[str]) -> list[str]:
    """The roles the rules name, in order of appearance (rules that do not parse aside)."""
    found: list[str] = []
    for text in texts:
        try:
            parts = rules.walk(rules.parse(text))
        except RuleError:
            continue
        found += [p.name for p in parts if isinstance(p, rules.Role) and p.name not in found]
    return found


def _without_authorization(spec: Spec) -> list[Problem]:
    """Rules in a spec without [authorization]: one problem, whose fix declares the roles
    they name."""
    used = [f"entities.{n}.access" for n, e in spec.entities.items() if e.access]
    used += [f"patterns.{n}.allow" for n, p in spec.patterns.items() if p.allow]
    if not used:
        return []
    texts = [p.allow for p in spec.patterns.values() if p.allow]
    for written in spec.entities.values():
        access = written.access
        if access is not None:
            ops = (access.default, access.read, access.create, access.update, access.delete)
            texts += [t for t in ops if t] + list(access.attributes.values())
    roles = _roles_named(texts)
    problem = Problem(
        used[0],
        "access rules ("
        + ", ".join(used)
        + ") need [authorization] with the roles they name: add [authorization] "
        + (f"roles = {fixes.names(roles)}" if roles else 'roles = ["admin", ...]'),
        fix=(Edit("authorization", "roles", fixes.names(roles)),) if roles else (),
    )
    return [problem]


def collect(resolved: Resolved) -> tuple[Rules | None, list[Problem]]:
    """The spec's rules (None when the spec has no [authorization]) and its problems."""
    spec = resolved.spec
    if spec.authorization is None:
        return None, _without_authorization(spec)
    collector = _Collector(resolved)
    collector.named()
    for name, entity in resolved.entities.items():
        collector.entity(name, entity)
    for name, pattern in spec.patterns.items():
        if _readable(pattern, resolved):
            collector.pattern(name, pattern)
    return collector.rules, collector.problems


def _readable(pattern: PatternSpec, resolved: Resolved) -> bool:
    """Whether the pattern's entities resolved (other checks report those that did not)."""
    names = {pattern.entity or "", *pattern.returns} - {""}
    return (
        bool(names)
        and names <= set(resolved.entities)
        and (pattern.operation == "query" or pattern.entity is not None)
    )


def check_authorization(resolved: Resolved) -> list[Problem]:
    return collect(resolved)[1]

"""Tenancy checks, one problem per cause, each with the fix that keeps the design's meaning:
a spec none of whose keys holds a tenant (say tenancy = "global" once), an entity none of
whose partition keys does, one index key or pattern that lost it, a global entity whose
keys or patterns still name it, and a query over both kinds."""

from __future__ import annotations

from collections.abc import Iterator

from . import fixes, keytemplate
from .diagnostics import Edit, Problem, toml_string
from .keytemplate import Template
from .resolve import Entity, Resolved
from .spec import PatternSpec

TENANT = "tenant"
DEFAULT_PREFIX = "T#{tenant}"


def _queries(resolved: Resolved) -> Iterator[tuple[str, PatternSpec]]:
    for name, pattern in resolved.spec.patterns.items():
        if pattern.operation == "query" and pattern.partition and pattern.returns:
            yield name, pattern


def _has_tenant(text: str) -> bool:
    return TENANT in keytemplate.parse(text, condition=True).placeholders


def prefix_of(template: Template) -> str:
    """The start of a key up to and including its {tenant} segment ("T#{tenant}")."""
    texts = [s.text for s in template.segments]
    return "#".join(texts[: texts.index("{tenant}") + 1])


def without_tenant(template: Template) -> str:
    """The template with its {tenant} segment taken out, and the literal marking it just
    before it (T, TENANT)."""
    segments = list(template.segments)
    at = next(i for i, s in enumerate(segments) if s.placeholder == TENANT)
    marker = segments[at - 1].literal if at > 0 else None
    start = at - 1 if marker is not None and marker.upper() in ("T", "TENANT") else at
    rest = [s.text for s in segments[:start] + segments[at + 1 :]]
    return "#".join(rest) + ("#" if template.trailing_delimiter else "")


def _partition_attrs(resolved: Resolved) -> list[tuple[str, str]]:
    """(index, its partition key attribute) of the table and every index."""
    found = []
    for index in resolved.all_indexes():
        keys = resolved.index_keys(index)
        assert keys is not None
        found.append((index, keys[0]))
    return found


def _listing(sites: list[str]) -> str:
    return ", ".join(sites[:4]) + (f" and {len(sites) - 4} more" if len(sites) > 4 else "")


def _pattern_without_tenant(pattern: PatternSpec) -> Iterator[tuple[str, str]]:
    """(partition or sort.<op>, its TOML value without {tenant}) of each of the pattern's
    templates that names it (none when one does not parse: the pattern checks report it)."""
    parts: list[tuple[str, tuple[str, ...]]] = [("partition", (str(pattern.partition),))]
    if pattern.sort is not None:
        for op in sorted(pattern.sort.model_fields_set):
            value = getattr(pattern.sort, op)
            parts.append((f"sort.{op}", value if isinstance(value, tuple) else (value,)))
    try:
        parsed = [
            (key, [keytemplate.parse(t, condition=True) for t in texts]) for key, texts in parts
        ]
    except keytemplate.TemplateError:
        return
    for key, templates in parsed:
        if not any(TENANT in t.placeholders for t in templates):
            continue
        texts = [without_tenant(t) if TENANT in t.placeholders else t.source for t in templates]
        if key == "partition":
            yield key, toml_string(texts[0])
        else:
            op = key.split(".")[1]
            value = fixes.names(texts) if len(texts) > 1 else toml_string(texts[0])
            yield key, f"{{ {op} = {value} }}"


def check_global_keys(resolved: Resolved) -> Iterator[Problem]:
    """A global entity's items are everyone's: neither its keys nor a pattern reading it
    may name {tenant}. One problem per entity, its fix every template without it."""
    reported: set[str] = set()
    for name, entity in resolved.entities.items():
        if entity.tenant_scoped:
            continue
        edits = [
            Edit(f"entities.{name}", f"keys.{attr}", toml_string(without_tenant(template)))
            for attr, template in entity.keys.items()
            if TENANT in template.placeholders
        ]
        sites = [f"keys.{attr}" for attr, t in entity.keys.items() if TENANT in t.placeholders]
        for pattern_name, pattern in _queries(resolved):
            if name not in pattern.returns or pattern_name in reported:
                continue
            for key, value in _pattern_without_tenant(pattern):
                reported.add(pattern_name)
                sites.append(f"patterns.{pattern_name}.{key}")
                edits.append(Edit(f"patterns.{pattern_name}", key.split(".")[0], value))
        if not edits:
            continue
        declared = "" if entity.spec.tenancy else " (the table's tenancy)"
        where = edits[0].path if edits[0].section.startswith("patterns") else f"entities.{name}"
        yield Problem(
            where,
            f"{name} is global{declared}: its items are everyone's, so no key of it names "
            f"{{tenant}}, yet {_listing(sites)} {'do' if len(sites) > 1 else 'does'}; take "
            f"{{tenant}} out of {'them' if len(sites) > 1 else 'it'} (or, if its "
            f'items are each a tenant\'s, set tenancy = "tenant" on {name} instead)',
            fix=tuple(edits),
        )


def check_missing_tenant(resolved: Resolved) -> Iterator[Problem]:
    """Partition keys and query partitions of a tenant's entities without {tenant}, grouped:
    the whole spec, an entity, one index key, one pattern."""
    scoped = {n: e for n, e in resolved.entities.items() if e.tenant_scoped}
    indexes = _partition_attrs(resolved)
    missing: dict[str, list[tuple[str, Template]]] = {}
    holding: dict[str, Template] = {}
    for name, entity in scoped.items():
        for _, attr in indexes:
            template = entity.keys.get(attr)
            if template is None:
                continue
            if TENANT in template.placeholders:
                holding.setdefault(name, template)
            else:
                missing.setdefault(name, []).append((attr, template))
    queries = list(_queries(resolved))
    lacking = [(n, p) for n, p in queries if not _has_tenant(str(p.partition))]
    any_tenant = bool(holding) or len(lacking) < len(queries)
    undeclared = all(e.spec.tenancy is None for e in scoped.values())
    if missing and not any_tenant and undeclared and resolved.spec.table.tenancy == "tenant":
        yield Problem(
            "table.tenancy",
            "no partition key or query partition holds {tenant}, though the table's items "
            "belong to tenants (the default): every tenant would share every item. If the "
            'items are everyone\'s, say so once, with tenancy = "global" on the table; if each '
            f"is a tenant's, start every partition key and query partition with {DEFAULT_PREFIX}",
            fix=(Edit("table", "tenancy", '"global"'),),
        )
        return
    fixed: set[str] = set()
    for name, keys in missing.items():
        entity = scoped[name]
        if name not in holding:
            yield _entity_without_tenant(resolved, name, entity, keys, fixed)
            continue
        prefix = prefix_of(holding[name])
        for attr, template in keys:
            edits = [Edit(f"entities.{name}", f"keys.{attr}", _prefixed(prefix, template))]
            index = next(i for i, a in indexes if a == attr)
            for pattern_name, pattern in lacking:
                if pattern.index == index and name in pattern.returns:
                    fixed.add(pattern_name)
                    edits.append(
                        Edit(f"patterns.{pattern_name}", "partition", _prefixed(prefix, pattern))
                    )
            yield Problem(
                f"entities.{name}.keys.{attr}",
                f"partition key {template.source!r} lacks {{tenant}}, which {name}'s other "
                f"keys hold: every tenant's {name} items would share it on {index}; start it "
                f"with {prefix}" + (", and the queries on it" if len(edits) > 1 else ""),
                fix=tuple(edits),
            )
    yield from _patterns_without_tenant(resolved, lacking, fixed)


def _prefixed(prefix: str, what: Template | PatternSpec) -> str:
    source = what.source if isinstance(what, Template) else str(what.partition)
    return toml_string(f"{prefix}#{source}")


def _entity_without_tenant(
    resolved: Resolved,
    name: str,
    entity: Entity,
    keys: list[tuple[str, Template]],
    fixed: set[str],
) -> Problem:
    """An entity none of whose partition keys holds {tenant}: the fix is to say it is
    global, unless it says itself that it is a tenant's."""
    listed = ", ".join(f"keys.{attr} {t.source!r}" for attr, t in keys)
    own = [(n, p) for n, p in _queries(resolved) if p.returns == (name,)]
    fixed.update(n for n, _ in own)
    if entity.spec.tenancy is None:
        return Problem(
            f"entities.{name}.keys",
            f"none of {name}'s partition keys ({listed}) holds {{tenant}}, so every tenant "
            f'would share its items: if they are everyone\'s, say tenancy = "global" on '
            f"{name}; if each is a tenant's, start its partition keys with {DEFAULT_PREFIX}",
            fix=(Edit(f"entities.{name}", "tenancy", '"global"'),),
        )
    return Problem(
        f"entities.{name}.keys",
        f'{name} says tenancy = "tenant", but none of its partition keys ({listed}) holds '
        f"{{tenant}}, so every tenant would share its items: start them, and the partitions "
        f"of the queries returning {name}, with {DEFAULT_PREFIX}",
        fix=(
            *(
                Edit(f"entities.{name}", f"keys.{attr}", _prefixed(DEFAULT_PREFIX, t))
                for attr, t in keys
            ),
            *(
                Edit(f"patterns.{n}", "partition", _prefixed(DEFAULT_PREFIX, p))
                for n, p in own
                if not _has_tenant(str(p.partition))
            ),
        ),
    )


def _patterns_without_tenant(
    resolved: Resolved, lacking: list[tuple[str, PatternSpec]], fixed: set[str]
) -> Iterator[Problem]:
    for pattern_name, pattern in lacking:
        if pattern_name in fixed:
            continue
        keys = resolved.index_keys(pattern.index)
        returned = [resolved.entities[r] for r in pattern.returns]
        if keys is None or not all(e.tenant_scoped for e in returned):
            continue
        templates = [e.keys[keys[0]] for e in returned if keys[0] in e.keys]
        holding = [t for t in templates if TENANT in t.placeholders]
        if not holding:
            continue
        yield Problem(
            f"patterns.{pattern_name}.partition",
            f"the partition {pattern.partition!r} holds no {{tenant}}, but it reads "
            f"{', '.join(pattern.returns)} items, which are a tenant's (their key "
            f"{holding[0].source!r}): start it as the key starts",
            fix=(
                Edit(
                    f"patterns.{pattern_name}",
                    "partition",
                    _prefixed(prefix_of(holding[0]), pattern),
                ),
            ),
        )


def check_mixed_scopes(resolved: Resolved) -> Iterator[Problem]:
    """A query reads one tenant's items or everyone's, not both."""
    for name, pattern in _queries(resolved):
        scoped = {resolved.entities[r].tenant_scoped for r in pattern.returns}
        if len(scoped) > 1:
            tenants = [r for r in pattern.returns if resolved.entities[r].tenant_scoped]
            globals_ = [r for r in pattern.returns if r not in tenants]
            yield Problem(
                f"patterns.{name}.returns",
                f"a query reads one tenant's items ({', '.join(tenants)}) or everyone's "
                f"({', '.join(globals_)}), not both: split it into one pattern of each",
            )


def served_partition(pattern: PatternSpec, key: Template) -> Template:
    """The pattern's partition as the key it must match: with the key's tenant prefix when
    only the tenant is missing (a problem reported here, not again as a key that does not
    serve the pattern)."""
    partition = keytemplate.parse(str(pattern.partition))
    if TENANT in partition.placeholders or TENANT not in key.placeholders:
        return partition
    return keytemplate.parse(f"{prefix_of(key)}#{partition.source}")

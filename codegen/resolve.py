"""The spec with its references followed: each entity's attributes (after attributes_from),
enum class names, parsed key templates, and the key attributes of every index."""

from __future__ import annotations

from dataclasses import dataclass, field

from . import keytemplate
from .diagnostics import Edit, Problem, toml_string
from .pytypes import KeyVar, camel, snake
from .spec import AttributeSpec, EntitySpec, Spec

TABLE_INDEX = "table"


@dataclass(frozen=True, slots=True)
class Attr:
    name: str
    spec: AttributeSpec
    enum_class: str | None = None

    def var(self) -> KeyVar:
        spec = self.spec
        return KeyVar(
            self.name, spec.type, spec.width, self.enum_class, spec.values or (), spec.id_separator
        )


@dataclass(slots=True)
class Entity:
    name: str
    spec: EntitySpec
    attrs: dict[str, Attr] = field(default_factory=dict)
    keys: dict[str, keytemplate.Template] = field(default_factory=dict)
    tenant_scoped: bool = True
    """Whether its items belong to a tenant (a global entity's are everyone's)."""

    @property
    def module(self) -> str:
        return snake(self.name)

    def var(self, name: str) -> KeyVar | None:
        if name == "tenant":
            return KeyVar("tenant", "id") if self.tenant_scoped else None
        attr = self.attrs.get(name)
        return attr.var() if attr else None


@dataclass(slots=True)
class Resolved:
    spec: Spec
    source: str
    entities: dict[str, Entity] = field(default_factory=dict)
    struct_attrs: dict[str, dict[str, Attr]] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)

    def index_keys(self, index: str) -> tuple[str, str | None] | None:
        """(partition key attribute, sort key attribute) of "table" or a GSI."""
        table = self.spec.table
        if index == TABLE_INDEX:
            return table.partition_key, table.sort_key
        gsi = table.indexes.get(index)
        return (gsi.partition_key, gsi.sort_key) if gsi else None

    def all_indexes(self) -> list[str]:
        return [TABLE_INDEX, *self.spec.table.indexes]


def _attrs(owner: str, specs: dict[str, AttributeSpec]) -> dict[str, Attr]:
    return {
        name: Attr(name, spec, camel(owner) + camel(name) if spec.type == "enum" else None)
        for name, spec in specs.items()
    }


def resolve(spec: Spec, source: str) -> Resolved:
    out = Resolved(spec, source)
    for name, struct in spec.structs.items():
        out.struct_attrs[name] = _attrs(name, struct.fields)
    for name, entity in spec.entities.items():
        tenancy = entity.tenancy or spec.table.tenancy
        resolved = Entity(name, entity, tenant_scoped=tenancy == "tenant")
        base = entity.attributes_from
        if base is not None:
            origin = spec.entities.get(base)
            if origin is None or origin.attributes_from is not None:
                out.problems.append(
                    Problem(
                        f"entities.{name}.attributes_from",
                        f"{base!r} is not an entity with its own attributes; name one of: "
                        + ", ".join(n for n, e in spec.entities.items() if not e.attributes_from),
                    )
                )
            else:
                resolved.attrs.update(_attrs(base, origin.attributes))
        resolved.attrs.update(_attrs(name, entity.attributes))
        for attr, text in entity.keys.items():
            try:
                resolved.keys[attr] = keytemplate.parse(text)
            except keytemplate.TemplateError as exc:
                fix = () if exc.fixed is None else (toml_string(exc.fixed),)
                out.problems.append(
                    Problem(
                        f"entities.{name}.keys.{attr}",
                        str(exc),
                        fix=tuple(Edit(f"entities.{name}", f"keys.{attr}", v) for v in fix),
                    )
                )
        out.entities[name] = resolved
    return out

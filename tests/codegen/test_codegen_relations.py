"""Relations in the API a spec gives: each is a field of its entity's type, of the shape its
pattern's operation gives (an object, a list, a connection taking the pattern's other
arguments), nullable where its pattern's rule may refuse the caller; each binds what answers
it; they store nothing, so the spec's fingerprint ignores them; one on an entity no pattern
returns compiles to nothing. Their lint messages are cases/bad_relations/'s, and the fixes
of misspelt names fix them."""

from __future__ import annotations

from pathlib import Path

import pytest
from graphql import GraphQLObjectType, build_schema

from codegen import pipeline
from codegen.diagnostics import SpecErrors
from codegen.lower import fingerprint
from codegen.resolve import resolve
from tests.codegen.spec_edits import apply

ROOT = Path(__file__).parents[2]
TIMESERIES = Path(__file__).with_name("cases") / "timeseries" / "spec.toml"


def _fields(spec: Path, type_name: str) -> dict[str, str]:
    files = pipeline.generate(spec.read_text(encoding="utf-8"), spec.name)
    shown = build_schema(files["api.graphql"]).type_map[type_name]
    assert isinstance(shown, GraphQLObjectType)
    return {
        name: f"({', '.join(f'{a}: {v.type}' for a, v in field.args.items())}) {field.type}"
        for name, field in shown.fields.items()
    }


TEAMS = """
[table]
name = "teams"
partition_key = "PK"
sort_key = "SK"
tenancy = "global"

[entities.Person]
type = "PERSON"
attributes.person_id = { type = "id" }
attributes.team_ids = { type = "list", of = "id", max_items = 10 }
keys.PK = "PERSON#{person_id}"
keys.SK = "PERSON"
relations.teams = { pattern = "get_teams", args = { team_id = "team_ids" } }

[entities.Team]
type = "TEAM"
attributes.team_id = { type = "id" }
keys.PK = "TEAM#{team_id}"
keys.SK = "TEAM"

[patterns.get_person]
operation = "get"
entity = "Person"

[patterns.get_teams]
operation = "batch_get"
entity = "Team"
"""


def test_relations_are_fields_of_their_operations_shape(tmp_path: Path) -> None:
    user = _fields(ROOT / "access_patterns.toml", "User")
    # UserOrder, a plain copy of Order, shows as Order; its rule can refuse: nullable
    # with the bounds of its ranged pattern, user_orders_between, as optional arguments
    assert user["orders"] == (
        "(first: Int, after: String, from: DateTime, to: DateTime) OrderConnection"
    )
    # memberships via their groups, the first page from group_ids
    assert user["groups"] == "(first: Int, after: String) GroupConnection"
    assert user["defaultAddress"] == "() Address"
    teams = tmp_path / "teams.toml"
    teams.write_text(TEAMS, encoding="utf-8")
    assert _fields(teams, "Person")["teams"] == "() [Team!]!"  # a batch get over team_ids
    device = _fields(TIMESERIES, "Device")
    assert device["events"] == (
        "(from: DateTime!, to: DateTime!, first: Int, after: String) EventConnection!"
    )
    assert _fields(TIMESERIES, "Event")["device"] == "() Device"


def test_each_relation_binds_its_pattern() -> None:
    files = pipeline.generate(TIMESERIES.read_text(encoding="utf-8"), TIMESERIES.name)
    bindings = files["api.py"]
    assert 'Bound("device_id", "device_id", "device_id")' in bindings
    assert "batch=get_devices" in bindings  # an event's device, loaded with its page's
    assert "page=DEVICE_EVENTS_BETWEEN_PAGE" in bindings
    assert 'Arg("from", "from_", "DateTime")' in bindings.split('"events": Relation(')[1]


def test_relations_leave_the_fingerprint_alone() -> None:
    resolved = pipeline.analyse(TIMESERIES.read_text(encoding="utf-8"), "spec.toml")
    spec = resolved.spec
    entities = {n: e.model_copy(update={"relations": {}}) for n, e in spec.entities.items()}
    bare = resolve(spec.model_copy(update={"entities": entities}), "spec.toml")
    assert any(e.spec.relations for e in resolved.entities.values())
    assert fingerprint(bare) == fingerprint(resolved)


def test_a_relation_of_an_entity_no_pattern_returns_is_no_field() -> None:
    spec = """
[table]
name = "notes"
partition_key = "PK"
sort_key = "SK"

[entities.Author]
type = "AUTHOR"
attributes.author_id = { type = "id" }
keys.PK = "T#{tenant}#AUTHOR#{author_id}"
keys.SK = "AUTHOR"

[entities.Note]
type = "NOTE"
attributes.note_id = { type = "id" }
attributes.author_id = { type = "id" }
keys.PK = "T#{tenant}#NOTE#{note_id}"
keys.SK = "NOTE"

[entities.Note.relations.author]
pattern = "get_author"
args = { author_id = "author_id" }

[patterns.get_author]
operation = "get"
entity = "Author"
"""
    files = pipeline.generate(spec, "spec.toml")
    assert "type Note" not in files["api.graphql"]
    assert "Relation(" not in files["api.py"]


def test_the_fixes_of_misspelt_relations_fix_them() -> None:
    text = (Path(__file__).with_name("cases") / "bad_relations" / "spec.toml").read_text()
    with pytest.raises(SpecErrors) as refused:
        pipeline.analyse(text, "spec.toml")
    fixed = [p for p in refused.value.problems if p.fix]
    assert {p.path for p in fixed} == {
        "entities.Team.relations.lead.pattern",
        "entities.Team.relations.leader.args.user_id",
    }
    text = apply(text, [edit for problem in fixed for edit in problem.fix])
    with pytest.raises(SpecErrors) as still:
        pipeline.analyse(text, "spec.toml")
    left = {p.path for p in still.value.problems}
    assert len(left) == len(refused.value.problems) - len(fixed)
    assert not left & {p.path for p in fixed}

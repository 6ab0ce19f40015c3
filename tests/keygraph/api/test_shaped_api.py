"""An API the spec shapes (the courses case), over each store: patterns without a root field,
attributes without a field, gets by global id, and connections `via` a relation of their
items (a course's students through its enrollments), batched, paged, and filtered by the
rule of what they show."""

from __future__ import annotations

from typing import Any

import pytest
from graphql import GraphQLObjectType, get_named_type

from keygraph.caller import Caller
from keygraph.plan import Delete, Put
from keygraph.store import Store
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CASES, Compiled, ask
from tests.keygraph.api.test_compiled_agree import IGNORE_GRAPHQL_CORE, both
from tests.keygraph.api.test_relations import Calls, Compile, nodes

STUDENTS = ("s0", "s1", "s2", "s3", "s4")
ENROLLED = {"c0": STUDENTS, "c1": ("s0", "s1"), "c2": ()}
ADMIN = Caller("staff", frozenset({"admin"}))
STUDENTS_OF = """query ($id: ID!, $after: String) { course(id: $id) {
  students(first: 2, after: $after) {
    edges { cursor node { id name } } pageInfo { hasNextPage startCursor endCursor } } } }"""


@pytest.fixture
async def school(
    kind: str, store_factory: StoreFactory, compiled: Compile
) -> tuple[Compiled, Store]:
    package = compiled(CASES / "courses" / "spec.toml")
    store = await store_factory(kind, package.table)
    student = package.module("models.student").Student
    course = package.module("models.course").Course
    enrollment = package.module("models.enrollment").Enrollment
    for tenant in ("acme", "other"):
        items = [student(student_id=s, name=f"Student {s}") for s in STUDENTS]
        items += [course(course_id=c, title=f"Course {c}") for c in ENROLLED]
        items += [
            enrollment(course_id=c, student_id=s)
            for c, enrolled in ENROLLED.items()
            for s in enrolled
        ]
        for item in items:
            await store.put(Put(item.to_item(tenant)))
    return package, store


async def _course_ids(package: Compiled, store: Store, tenant: str = "acme") -> dict[str, str]:
    answer = await ask(
        package.schema, store, tenant, "{ courses { edges { node { id title } } } }", caller=ADMIN
    )
    assert "errors" not in answer, answer
    return {
        node["title"].removeprefix("Course "): node["id"]
        for node in nodes(answer["data"]["courses"])
    }


async def _student_ids(package: Compiled, store: Store, course_id: str) -> dict[str, str]:
    document = """query ($id: ID!) {
      course(id: $id) { students(first: 100) { edges { node { id name } } } } }"""
    answer = await ask(package.schema, store, "acme", document, {"id": course_id}, ADMIN)
    assert "errors" not in answer, answer
    shown = nodes(answer["data"]["course"]["students"])
    return {node["name"].removeprefix("Student "): node["id"] for node in shown}


async def test_the_spec_shapes_the_schema(school: tuple[Compiled, Store]) -> None:
    schema = school[0].schema
    query = schema.query_type
    assert query is not None
    assert sorted(query.fields) == ["course", "courseTitles", "courses", "node", "student"]
    assert str(query.fields["courseTitles"].type) == "[Course!]"  # its rule may refuse
    assert list(query.fields["courseTitles"].args) == ["first"]
    assert list(query.fields["student"].args) == ["id"]
    assert "Enrollment" not in schema.type_map  # shown only through `via`
    student = schema.type_map["Student"]
    assert isinstance(student, GraphQLObjectType)
    assert sorted(student.fields) == ["courses", "id", "name"]  # no studentId
    course = schema.type_map["Course"]
    assert isinstance(course, GraphQLObjectType)
    assert get_named_type(course.fields["students"].type).name == "StudentConnection"
    assert str(course.fields["roster"].type) == "[Student!]"
    assert list(course.fields["roster"].args) == ["first"]


async def test_a_list_answers_the_first_page(school: tuple[Compiled, Store]) -> None:
    package, store = school
    document = "{ courseTitles(first: 2) { title roster(first: 3) { name } } }"
    calls = Calls(store)
    answer = await ask(package.schema, calls, "acme", document, caller=ADMIN)
    assert answer == {
        "data": {
            "courseTitles": [
                {"title": "Course c0", "roster": [{"name": f"Student s{n}"} for n in range(3)]},
                {"title": "Course c1", "roster": [{"name": "Student s0"}, {"name": "Student s1"}]},
            ]
        }
    }
    assert calls.kinds == {"Query": 3, "BatchGetItem": 1}
    member = Caller("s4", frozenset({"member"}))
    answer = await ask(package.schema, store, "acme", document, caller=member)
    assert [course["roster"] for course in answer["data"]["courseTitles"]] == [[], []]
    for hostile in (-1, 101, 2**31 - 1):
        answer = await ask(
            package.schema,
            store,
            "acme",
            "query ($n: Int) { courseTitles(first: $n) { title } }",
            {"n": hostile},
            ADMIN,
        )
        assert {e["extensions"]["code"] for e in answer.get("errors", [])} == {"BAD_USER_INPUT"}, (
            hostile
        )


async def test_a_get_by_global_id(school: tuple[Compiled, Store]) -> None:
    package, store = school
    courses = await _course_ids(package, store)
    assert sorted(courses) == sorted(ENROLLED)
    document = "query ($id: ID!) { course(id: $id) { id title } student(id: $id) { name } }"
    answer = await ask(package.schema, store, "acme", document, {"id": courses["c1"]}, ADMIN)
    # a course's id names no student: null, as `node` answers another type's id
    assert answer == {
        "data": {"course": {"id": courses["c1"], "title": "Course c1"}, "student": None}
    }
    for hostile in ("!!", "", "x" * 5000, "WyJjMSJd"):
        answer = await ask(package.schema, store, "acme", document, {"id": hostile}, ADMIN)
        assert answer["data"] == {"course": None, "student": None}, hostile
        assert {e["extensions"]["code"] for e in answer["errors"]} == {"BAD_USER_INPUT"}, hostile


async def test_another_tenant_reads_nothing_by_our_ids(school: tuple[Compiled, Store]) -> None:
    package, store = school
    ours = await _course_ids(package, store)
    theirs = await _course_ids(package, store, "other")
    assert ours == theirs  # the same keys: ids name no tenant, the token does
    await store.delete(Delete(package.module("keys.course").key("other", "c0")))
    document = "query ($id: ID!) { course(id: $id) { title } }"
    answer = await ask(package.schema, store, "other", document, {"id": ours["c0"]}, ADMIN)
    assert answer == {"data": {"course": None}}
    answer = await ask(package.schema, store, "acme", document, {"id": ours["c0"]}, ADMIN)
    assert answer == {"data": {"course": {"title": "Course c0"}}}


async def test_via_pages_show_each_item_once(school: tuple[Compiled, Store]) -> None:
    package, store = school
    courses = await _course_ids(package, store)
    seen: list[str] = []
    after = None
    while True:
        variables = {"id": courses["c0"], "after": after}
        answer = await ask(package.schema, store, "acme", STUDENTS_OF, variables, ADMIN)
        assert "errors" not in answer, answer
        page = answer["data"]["course"]["students"]
        seen += [edge["node"]["name"] for edge in page["edges"]]
        assert page["pageInfo"]["startCursor"] == page["edges"][0]["cursor"]
        if not page["pageInfo"]["hasNextPage"]:
            break
        after = page["pageInfo"]["endCursor"]
    assert seen == [f"Student {s}" for s in STUDENTS]


async def test_via_is_batched_one_call_a_wave(school: tuple[Compiled, Store]) -> None:
    package, store = school
    calls = Calls(store)
    document = "{ courses { edges { node { title students { edges { node { name } } } } } } }"
    answer = await ask(package.schema, calls, "acme", document, caller=ADMIN)
    assert "errors" not in answer, answer
    shown = {
        node["title"]: [n["name"] for n in nodes(node["students"])]
        for node in nodes(answer["data"]["courses"])
    }
    assert shown == {f"Course {c}": [f"Student {s}" for s in e] for c, e in ENROLLED.items()}
    # the courses, each course's enrollments, then every student of them in one batch get
    assert calls.kinds == {"Query": 1 + len(ENROLLED), "BatchGetItem": 1}
    assert calls.waves == 3


async def test_via_shows_only_what_the_caller_may_read(school: tuple[Compiled, Store]) -> None:
    package, store = school
    courses = await _course_ids(package, store)
    students = await _student_ids(package, store, courses["c0"])
    member = Caller("s1", frozenset({"member"}))
    document = """query ($c: ID!, $s: ID!) {
      course(id: $c) { students { edges { node { name } } } }
      student(id: $s) { name } }"""
    variables = {"c": courses["c0"], "s": students["s2"]}
    answer = await ask(package.schema, store, "acme", document, variables, member)
    assert nodes(answer["data"]["course"]["students"]) == [{"name": "Student s1"}]
    assert answer["data"]["student"] is None
    assert [(e["path"], e["extensions"]["code"]) for e in answer["errors"]] == [
        (["student"], "FORBIDDEN")
    ]
    nobody = Caller("s1", frozenset())
    answer = await ask(package.schema, store, "acme", document, variables, nobody)
    assert answer["data"] == {"course": None, "student": None}
    assert {e["extensions"]["code"] for e in answer["errors"]} == {"FORBIDDEN"}


async def test_via_leaves_out_an_item_gone_since(school: tuple[Compiled, Store]) -> None:
    package, store = school
    courses = await _course_ids(package, store)
    student_keys = package.module("keys.student")
    for gone in ("s0", "s3"):
        await store.delete(Delete(student_keys.key("acme", gone)))
    answer = await ask(package.schema, store, "acme", STUDENTS_OF, {"id": courses["c0"]}, ADMIN)
    assert "errors" not in answer, answer
    page = answer["data"]["course"]["students"]
    assert [edge["node"]["name"] for edge in page["edges"]] == ["Student s1"]
    assert page["pageInfo"]["startCursor"] == page["edges"][0]["cursor"]
    shown = ["Student s1"]
    while page["pageInfo"]["hasNextPage"]:  # pages of two items: [s2, s3 gone], [s4]
        variables = {"id": courses["c0"], "after": page["pageInfo"]["endCursor"]}
        answer = await ask(package.schema, store, "acme", STUDENTS_OF, variables, ADMIN)
        page = answer["data"]["course"]["students"]
        shown += [edge["node"]["name"] for edge in page["edges"]]
    assert shown == ["Student s1", "Student s2", "Student s4"]


@IGNORE_GRAPHQL_CORE
async def test_compiled_and_graphql_core_agree_on_shaped_fields(
    school: tuple[Compiled, Store],
) -> None:
    package, store = school
    courses = await _course_ids(package, store)
    students = await _student_ids(package, store, courses["c0"])
    document = """{ courses(first: 3) { edges { cursor node { id title
        students(first: 3) { edges { cursor node { id name
          courses { edges { node { title } } pageInfo { startCursor endCursor } } } }
        pageInfo { hasNextPage startCursor endCursor } } } } }
      a: course(id: %s) { title } b: student(id: %s) { name } c: student(id: "!!") { name } }"""
    document %= (_quoted(courses["c2"]), _quoted(students["s3"]))
    callers: list[Any] = [None, ADMIN, Caller("s3", frozenset({"member"}))]
    for caller in callers:
        compiled_answer, core_answer = await both(package.schema, document, store, caller)
        assert compiled_answer == core_answer, caller


def _quoted(text: str) -> str:
    return f'"{text}"'

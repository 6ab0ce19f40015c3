"""A request's reads answered from what it already read, on the courses case
(tests/codegen/cases/courses): a get of an item a Query or a batch get of the request read
makes no store call (keygraph/api/remembered.py), a write forgets them; an extension's
field read ahead with a root field's get of its parent (keygraph/api/ahead.py), so one
batch get answers both, unless @skip leaves the field out; a look-ahead its rule refuses
changes no answer; a query read with query_once is one call however many fields ask it."""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from graphql import GraphQLSchema

from keygraph.api import ApiContext, Extension, executable, execute, load_many, query_once
from keygraph.api.ids import global_id
from keygraph.api.remembered import Remembering
from keygraph.caller import Caller
from keygraph.plan import Get, Item, Put
from keygraph.store import Session, Store
from keygraph.stores.view import Forwarding
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CASES, CODEC, Compiled
from tests.keygraph.api.test_compiled_agree import IGNORE_GRAPHQL_CORE
from tests.keygraph.api.test_relations import Calls

TENANT = "acme"
ADMIN = Caller("a", frozenset({"admin"}))
SDL = '''
extend type Course {
  """The course's lab: the course whose id is this one's with "-lab"."""
  lab: Course
  """How many students the course has, of its first 100."""
  headcount: Int!
}

extend type Student {
  """The student whose id is this one's with "-buddy"."""
  buddy: Student
}
'''


def extension(package: ModuleType) -> Extension:
    """Fields the courses spec cannot say: a course's lab and a student's buddy, each read
    ahead with its parent, and a course's headcount, its enrollments read once."""
    queries = importlib.import_module(f"{package.__name__}.queries")
    extended = Extension(SDL)

    def with_lab(ctx: ApiContext, course_id: str) -> Any:
        return load_many(ctx, queries.get_courses, [course_id, f"{course_id}-lab"])

    @extended.field("Course.lab", guard="get_courses", ahead=with_lab)
    async def lab(course: Any, info: Any) -> Any:
        (found,) = await load_many(info.context, queries.get_courses, [f"{course.course_id}-lab"])
        return found

    @extended.field("Course.headcount", guard="course_enrollments")
    async def headcount(course: Any, info: Any) -> int:
        page = await query_once(
            info.context, queries.course_enrollments, course.course_id, first=100
        )
        return len(page.items)

    def with_buddy(ctx: ApiContext, student_id: str) -> Any:
        return load_many(ctx, queries.get_students, [student_id, f"{student_id}-buddy"])

    @extended.field("Student.buddy", guard="get_students", ahead=with_buddy)
    async def buddy(student: Any, info: Any) -> Any:
        (found,) = await load_many(
            info.context, queries.get_students, [f"{student.student_id}-buddy"]
        )
        return found

    return extended


@pytest.fixture
async def courses(
    kind: str, store_factory: StoreFactory, compiled: Callable[[Path], Compiled]
) -> tuple[Compiled, GraphQLSchema, Store]:
    """The courses package, its API extended, with courses c1 and c2 and their labs, and
    students s1 and s2 (and s1's buddy) enrolled in c1."""
    package = compiled(CASES / "courses" / "spec.toml")
    api = package.module("api").API
    schema = executable(api, [extension(package.package)], package.module("authz"))
    store = await store_factory(kind, package.table)
    course = package.module("models.course").Course
    student = package.module("models.student").Student
    enrollment = package.module("models.enrollment").Enrollment
    for course_id in ("c1", "c1-lab", "c2", "c2-lab"):
        await store.put(Put(course(course_id=course_id, title=course_id).to_item(TENANT)))
    for student_id in ("s1", "s1-buddy", "s2"):
        await store.put(Put(student(student_id=student_id, name=student_id).to_item(TENANT)))
    for student_id in ("s1", "s2"):
        made = enrollment(course_id="c1", student_id=student_id)
        await store.put(Put(made.to_item(TENANT)))
    return package, schema, store


async def run(
    courses: tuple[Compiled, GraphQLSchema, Store],
    document: str,
    compiled_run: bool = True,
    caller: Caller = ADMIN,
    remembered: bool = True,
) -> tuple[dict[str, Any], dict[str, int], int]:
    """The document's answer in a request of its own, its store calls by kind and waves."""
    package, schema, store = courses
    calls = Calls(store)
    read: Store = Remembering(calls, package.table) if remembered else calls
    context = ApiContext(Session(read, CODEC, caller), TENANT)
    answer = await execute(schema, document, context, compiled=compiled_run)
    return answer, dict(calls.kinds), calls.waves


def course_id(local: str) -> str:
    return global_id("Course", [local])


COURSE_AND_ITS_STUDENTS = f"""{{ course(id: "{course_id("c1")}") {{ title
  students {{ edges {{ node {{ name courses {{ edges {{ node {{ title }} }} }} }} }} }} }} }}"""


@IGNORE_GRAPHQL_CORE
@pytest.mark.parametrize("compiled_run", [True, False])
async def test_a_get_of_an_item_the_request_read_is_answered_from_it(
    courses: tuple[Compiled, GraphQLSchema, Store], compiled_run: bool
) -> None:
    answer, kinds, _ = await run(courses, COURSE_AND_ITS_STUDENTS, compiled_run)
    assert "errors" not in answer, answer
    students = answer["data"]["course"]["students"]["edges"]
    assert sorted(edge["node"]["name"] for edge in students) == ["s1", "s2"]
    for edge in students:
        assert edge["node"]["courses"]["edges"] == [{"node": {"title": "c1"}}]
    # the course, its enrollments, their students, each student's enrollments; the course
    # each enrollment names is the one the request read first
    assert kinds == {"GetItem": 1, "Query": 3, "BatchGetItem": 1}
    again, unremembered, _ = await run(
        courses, COURSE_AND_ITS_STUDENTS, compiled_run, remembered=False
    )
    assert again == answer
    assert unremembered == {"GetItem": 1, "Query": 3, "BatchGetItem": 2}


async def test_a_write_forgets_what_the_request_read(
    courses: tuple[Compiled, GraphQLSchema, Store],
) -> None:
    package, _, store = courses
    keys = package.module("keys.course")
    calls = Calls(store)
    remembering = Remembering(calls, package.table)
    get = Get(keys.key(TENANT, "c1"))
    first = await remembering.get(get)
    assert first is not None
    assert await remembering.get(get) == first
    assert calls.calls == 1  # the second get is answered from the first
    assert await remembering.get(Get(get.key, consistent=True)) == first
    assert calls.calls == 2  # a consistent get reads the table
    changed = {**first, "title": "renamed"}
    await remembering.put(Put(changed))
    assert await remembering.get(get) == changed
    assert calls.calls == 4  # the put, and the get after it


class HeldGets(Forwarding):
    """Answers each get with the item as it was when asked (`read` set then), once
    `release` is set."""

    def __init__(self, inner: Store) -> None:
        super().__init__(inner)
        self.read = asyncio.Event()
        self.release = asyncio.Event()

    async def get(self, plan: Get) -> Item | None:
        item = await self.inner.get(plan)
        self.read.set()
        await self.release.wait()
        return item


async def test_a_read_a_write_overtook_is_not_remembered(
    courses: tuple[Compiled, GraphQLSchema, Store],
) -> None:
    package, _, store = courses
    held = HeldGets(store)
    remembering = Remembering(held, package.table)
    get = Get(package.module("keys.course").key(TENANT, "c1"))
    before = asyncio.ensure_future(remembering.get(get))
    await held.read.wait()
    old = await store.get(get)
    assert old is not None
    await remembering.put(Put({**old, "title": "renamed"}))
    held.release.set()
    assert await before == old
    after = await remembering.get(get)
    assert after is not None
    assert after["title"] == "renamed"


@IGNORE_GRAPHQL_CORE
@pytest.mark.parametrize("compiled_run", [True, False])
async def test_a_field_read_ahead_is_one_batch_get_with_its_parent(
    courses: tuple[Compiled, GraphQLSchema, Store], compiled_run: bool
) -> None:
    document = f"""{{ a: course(id: "{course_id("c1")}") {{ title lab {{ title }} }}
      b: node(id: "{course_id("c2")}") {{ ... on Course {{ title ...Lab }} }} }}
    fragment Lab on Course {{ lab {{ title }} }}"""
    answer, kinds, waves = await run(courses, document, compiled_run)
    assert "errors" not in answer, answer
    assert answer["data"]["a"] == {"title": "c1", "lab": {"title": "c1-lab"}}
    assert answer["data"]["b"] == {"title": "c2", "lab": {"title": "c2-lab"}}
    assert (kinds, waves) == ({"BatchGetItem": 1}, 1)  # both courses with their labs
    _, unremembered, waves = await run(courses, document, compiled_run, remembered=False)
    assert (unremembered, waves) == ({"BatchGetItem": 1, "GetItem": 2}, 2)


@IGNORE_GRAPHQL_CORE
@pytest.mark.parametrize("compiled_run", [True, False])
async def test_a_field_skipped_is_not_read_ahead(
    courses: tuple[Compiled, GraphQLSchema, Store], compiled_run: bool
) -> None:
    document = f"""query($skip: Boolean!) {{ course(id: "{course_id("c1")}") {{ title
      lab @skip(if: $skip) {{ title }} }} }}"""
    package, schema, store = courses
    calls = Calls(store)
    context = ApiContext(Session(Remembering(calls, package.table), CODEC, ADMIN), TENANT)
    answer = await execute(schema, document, context, {"skip": True}, compiled=compiled_run)
    assert answer == {"data": {"course": {"title": "c1"}}}
    assert dict(calls.kinds) == {"GetItem": 1}


@IGNORE_GRAPHQL_CORE
@pytest.mark.parametrize("compiled_run", [True, False])
async def test_a_look_ahead_its_rule_refuses_changes_no_answer(
    courses: tuple[Compiled, GraphQLSchema, Store], compiled_run: bool
) -> None:
    document = (
        f"""{{ student(id: "{global_id("Student", ["s1"])}") {{ name buddy {{ name }} }} }}"""
    )
    member = Caller("s1", frozenset({"member"}))
    answer, kinds, _ = await run(courses, document, compiled_run, member)
    assert answer["data"] == {"student": {"name": "s1", "buddy": None}}
    assert [(e["path"], e["extensions"]["code"]) for e in answer["errors"]] == [
        (["student", "buddy"], "FORBIDDEN")
    ]
    assert kinds == {"GetItem": 1}  # the batch get with s1-buddy was refused before any read
    again, _, _ = await run(courses, document, compiled_run, member, remembered=False)
    assert again == answer


@IGNORE_GRAPHQL_CORE
@pytest.mark.parametrize("compiled_run", [True, False])
async def test_a_query_read_once_is_shared_by_every_field_asking_it(
    courses: tuple[Compiled, GraphQLSchema, Store], compiled_run: bool
) -> None:
    document = f"""{{ course(id: "{course_id("c1")}") {{ a: headcount b: headcount }} }}"""
    answer, kinds, _ = await run(courses, document, compiled_run)
    assert answer == {"data": {"course": {"a": 2, "b": 2}}}
    assert kinds == {"GetItem": 1, "Query": 1}


def test_ahead_is_for_a_field_of_a_generated_type(compiled: Callable[[Path], Compiled]) -> None:
    package = compiled(CASES / "courses" / "spec.toml")
    extended = Extension("type Lab { name: String }\nextend type Query { aLab: Lab }")

    @extended.field("Query.aLab", public=True, ahead=lambda ctx: ctx)
    def a_lab(_: Any, _info: Any) -> None:
        return None

    with pytest.raises(ValueError, match=r"Query\.aLab: ahead is for a field of a generated type"):
        executable(package.module("api").API, [extended], package.module("authz"))

"""`keygraph serve` reads and sends a query whose answer may hold more objects than its
stream cost in parts (keygraph/serve/parted.py), on another spec than this repository's
(the courses case): the same answer as in one piece, spliced into the bytes orjson makes of
it, its list of courses read a part at a time, what a part read freed before the next part
loads, a failure in a later part nulling what a whole answer would, and the memory a large
answer takes."""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import orjson
import pytest

from keygraph.page import Page
from keygraph.plan import Put, Query, QueryResult
from keygraph.serve import create_app
from keygraph.serve.limits import STREAM_COST
from keygraph.serve.package import served
from keygraph.serve.parted import Part
from keygraph.store import Store
from keygraph.stores.view import Forwarding
from keygraph.tokens import issue
from tests.conftest import StoreFactory
from tests.keygraph.api.conftest import CASES, Compiled

SECRET = "parts-secret-" + "p" * 32
COURSES = 12
STUDENTS = 4
QUERY = f"""{{ courses(first: {COURSES}) {{ edges {{ node {{ title
  students(first: 5) {{ edges {{ node {{ name }} }} }} roster(first: 5) {{ name }} }} }} }} }}"""
"""Each course may hold 1 + 5 + 5 objects; with STUDENTS it holds 9."""
PARTS: dict[str, Any] = {"stream_cost": 20, "part_objects": 20}
"""The first part one course (its estimate, 11 objects), then two a part (each held 9)."""


async def _enrolled(package: Compiled, store: Store, courses: int, students: int) -> None:
    """`courses` courses in acme, each with the same `students` students."""
    student = package.module("models.student").Student
    course = package.module("models.course").Course
    enrollment = package.module("models.enrollment").Enrollment
    items = [student(student_id=f"s{s}", name=f"Student {s}") for s in range(students)]
    for c in range(courses):
        items.append(course(course_id=f"c{c:02}", title=f"Course {c:02}"))
        items += [enrollment(course_id=f"c{c:02}", student_id=f"s{s}") for s in range(students)]
    for item in items:
        await store.put(Put(item.to_item("acme")))


@pytest.fixture
async def school(
    kind: str, store_factory: StoreFactory, compiled: Callable[[Path], Compiled]
) -> tuple[str, Store]:
    """The courses package's name and a store of `kind` with COURSES courses of STUDENTS
    students each."""
    package = compiled(CASES / "courses" / "spec.toml")
    store = await store_factory(kind, package.table)
    await _enrolled(package, store, COURSES, STUDENTS)
    return package.package.__name__, store


async def _answer(
    package: str, store: Store, *, query: str = QUERY, **options: Any
) -> httpx.Response:
    """The response of keygraph serve, in dev mode with `options`, to `query` as an admin."""
    app = create_app(served(package, store, SECRET, dev=True, **options))
    token = issue(SECRET, "acme", "staff", roles=["admin"])
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://serve.test") as client:
        headers = {"authorization": f"Bearer {token}", "x-request-id": "r"}
        response = await client.post("/graphql", json={"query": query}, headers=headers)
    assert response.status_code == 200, response.text
    return response


async def test_a_large_answer_is_read_and_sent_in_parts(school: tuple[str, Store]) -> None:
    package, store = school
    whole = await _answer(package, store)
    parted = await _answer(package, store, **PARTS)
    body, one = orjson.loads(parted.content), orjson.loads(whole.content)
    assert int(parted.headers["content-length"]) == len(parted.content)
    assert parted.content == orjson.dumps(body)  # the pieces spliced as one serialization
    assert body["data"] == one["data"]
    courses = body["data"]["courses"]["edges"]
    assert [len(c["node"]["roster"]) for c in courses] == [STUDENTS] * COURSES
    cost, whole_cost = body["extensions"]["cost"], one["extensions"]["cost"]
    assert cost["actual"]["objects"] == whole_cost["actual"]["objects"] == COURSES * 9
    # the courses' page, then each part's students and rosters a wave: parts of 1, 2, 2,
    # 2, 2, 2 and 1 courses, where in one piece all the courses' are one wave
    assert one["extensions"]["storeWaves"] == 1 + 2
    assert body["extensions"]["storeWaves"] == 1 + 2 * 7


async def test_what_a_part_read_is_freed_before_the_next_part_loads(
    school: tuple[str, Store], monkeypatch: pytest.MonkeyPatch
) -> None:
    package, store = school
    live: list[int] = []
    add = Part.add

    def read(thing: object) -> bool:
        return type(thing) is Page or type(thing).__name__ in ("Enrollment", "Student")

    def counting(part: Part, item: Any) -> None:
        live.append(sum(map(read, gc.get_objects())) - before)
        add(part, item)

    monkeypatch.setattr(Part, "add", counting)
    gc.collect()
    before = sum(map(read, gc.get_objects()))  # what earlier tests left alive
    await _answer(package, store, **PARTS)
    assert len(live) == COURSES
    # the courses' page, and at most a part's two courses' page of enrollments (students and
    # roster share it) and the students they name: never the 12 courses' 48 enrollments
    assert max(live) <= 1 + 2 * (1 + STUDENTS) + STUDENTS


class _Failing(Forwarding):
    """The store, but a course's enrollments cannot be read."""

    def __init__(self, inner: Store, course_id: str) -> None:
        super().__init__(inner)
        self.answers_inline = False
        self.partition = f"T#acme#COURSE#{course_id}"

    async def query(self, plan: Query) -> QueryResult:
        if plan.partition == self.partition:
            raise RuntimeError("the store failed")
        return await super().query(plan)


async def test_a_failure_in_a_later_part_nulls_what_a_whole_answer_would(
    school: tuple[str, Store],
) -> None:
    package, store = school
    failing = _Failing(store, "c09")  # in the sixth part
    whole = orjson.loads((await _answer(package, failing)).content)
    parted = orjson.loads((await _answer(package, failing, **PARTS)).content)
    paths = [error["path"] for error in parted["errors"]]
    assert paths == [["courses", "edges", 9, "node", field] for field in ("students", "roster")]
    assert parted["data"] == whole["data"]
    assert parted["errors"] == whole["errors"]
    assert parted["data"]["courses"]["edges"][9]["node"]["students"] is None
    objects = parted["extensions"]["cost"]["actual"]["objects"]
    assert objects == whole["extensions"]["cost"]["actual"]["objects"] == (COURSES - 1) * 9 + 1


async def test_a_large_answer_in_parts_takes_a_fraction_of_the_memory(
    store_factory: StoreFactory, compiled: Callable[[Path], Compiled]
) -> None:
    """The peak of what Python allocates answering 100 courses of 100 students (1.5 MB), the
    client's copy of the body among it: in parts of the default size, under half of what the
    answer takes in one piece (4 MB and 13 MB here)."""
    package = compiled(CASES / "courses" / "spec.toml")
    store = await store_factory("embedded", package.table)
    await _enrolled(package, store, 100, 100)
    name = package.package.__name__
    query = """{ courses(first: 100) { edges { node { title
      students(first: 100) { edges { cursor node { id name } } } } } } }"""
    peaks: dict[int, int] = {}
    for stream_cost in (STREAM_COST, 1_000):
        await _answer(name, store, query=query, max_cost=100_000, stream_cost=stream_cost)  # warm
        tracemalloc.start()
        try:
            response = await _answer(
                name, store, query=query, max_cost=100_000, stream_cost=stream_cost
            )
            peaks[stream_cost] = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert "errors" not in orjson.loads(response.content)
    assert peaks[1_000] < peaks[STREAM_COST] / 2

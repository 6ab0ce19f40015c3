"""Failures a fuzzer collects over a whole run, grouped by what went wrong, so one run
shows every case that breaks rather than the first; and the work a request makes, counted
in Python calls."""

from __future__ import annotations

import sys
from collections import defaultdict
from types import FrameType
from typing import Any

import httpx

from tests.server.fuzz.target import leaked


class Failures:
    """Cases that broke an invariant, by problem."""

    def __init__(self) -> None:
        self.by_problem: dict[str, list[str]] = defaultdict(list)

    def add(self, problem: str, case: str) -> None:
        if case not in self.by_problem[problem]:
            self.by_problem[problem].append(case)

    def status(self, response: httpx.Response, case: str, sent: str = "") -> None:
        """Notes a 5xx, and a traceback or source path in the answer (but words of what was
        `sent`, which an answer may echo)."""
        if response.status_code >= 500:
            self.add(f"HTTP {response.status_code}", f"{case} -> {response.text[:200]}")
        if leaked(response.text, sent) is not None:
            self.add("traceback or path in the answer", f"{case} -> {response.text[:200]}")

    def answer(self, response: httpx.Response, case: str, sent: str = "") -> dict[str, Any] | None:
        """The JSON object of an answer, after noting how it breaks the rules every answer
        keeps: no 5xx, no traceback or path (status), a JSON object, a code on every error,
        none INTERNAL. None when it is no JSON object."""
        self.status(response, case, sent)
        try:
            body = response.json()
        except ValueError:
            self.add("answer is not JSON", f"{case} -> {response.text[:200]}")
            return None
        if not isinstance(body, dict):
            self.add("answer is not a JSON object", f"{case} -> {response.text[:200]}")
            return None
        for error in body.get("errors") or []:
            code = error.get("extensions", {}).get("code") if isinstance(error, dict) else None
            if not isinstance(code, str) or not code:
                self.add("error without extensions.code", f"{case} -> {error}")
            elif code == "INTERNAL":
                self.add("INTERNAL", case)
        return body

    def report(self, limit: int = 12) -> str:
        lines = []
        for problem, cases in sorted(self.by_problem.items()):
            lines.append(f"{problem}: {len(cases)} cases")
            lines.extend(f"    {case}" for case in cases[:limit])
        return "\n".join(lines)

    def __bool__(self) -> bool:
        return bool(self.by_problem)


class Work:
    """The Python function calls made on this thread while the block runs."""

    def __init__(self) -> None:
        self.calls = 0

    def _count(self, _frame: FrameType, event: str, _arg: Any) -> None:
        if event == "call":
            self.calls += 1

    def __enter__(self) -> Work:
        sys.setprofile(self._count)
        return self

    def __exit__(self, *_exc: object) -> None:
        sys.setprofile(None)

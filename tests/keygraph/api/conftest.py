"""Fixtures for the API of generated packages: `compiled(spec)` generates a spec's package
into a temporary directory and imports it under a name of its own, with its API schema
built (`Compiled`); `ask` runs an operation on it as a caller of a tenant."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from graphql import GraphQLSchema

from codegen import output, pipeline
from keygraph.api import ApiContext, executable, execute
from keygraph.caller import Caller
from keygraph.cursor import CursorCodec
from keygraph.store import Session, Store

ROOT = Path(__file__).parents[3]
CASES = ROOT / "tests" / "codegen" / "cases"
CODEC = CursorCodec(b"api-test-cursor-key-" + b"k" * 12)


@dataclass
class Compiled:
    """A spec's generated package, imported, and its executable API."""

    package: ModuleType
    schema: GraphQLSchema

    @property
    def table(self) -> Any:
        return importlib.import_module(f"{self.package.__name__}.table").TABLE

    def module(self, name: str) -> ModuleType:
        return importlib.import_module(f"{self.package.__name__}.{name}")


@pytest.fixture
def compiled(tmp_path: Path) -> Iterator[Callable[[Path], Compiled]]:
    names: list[str] = []

    def compile_spec(spec: Path) -> Compiled:
        name = f"api_{spec.parent.name}_{len(names)}".replace("-", "_")
        files = pipeline.generate(spec.read_text(encoding="utf-8"), spec.name, name)
        output.write(files, tmp_path / name)
        names.append(name)
        if str(tmp_path) not in sys.path:
            sys.path.insert(0, str(tmp_path))
        importlib.invalidate_caches()
        package = importlib.import_module(name)
        api = importlib.import_module(f"{name}.api").API
        return Compiled(package, executable(api))

    yield compile_spec
    if str(tmp_path) in sys.path:
        sys.path.remove(str(tmp_path))
    for module in [m for m in sys.modules if m.split(".")[0] in names]:
        del sys.modules[module]


async def ask(
    schema: GraphQLSchema,
    store: Store,
    tenant: str,
    document: str,
    variables: dict[str, Any] | None = None,
    caller: Caller | None = None,
) -> dict[str, Any]:
    """The answer to `document` for `caller` (None: the server itself) of `tenant`."""
    context = ApiContext(Session(store, CODEC, caller), tenant)
    return await execute(schema, document, context, variables)

"""Fixtures for the API of generated packages: `compiled(spec)` generates a spec's package
into a temporary directory and imports it under a name of its own, with its API schema
built (`Compiled`); `ask` runs an operation on it as a caller of a tenant. For the served
API: `shop`, the webshop case's package on a store of each kind with products in it,
`served_client` over an app, and `bearer` and `post` to ask it."""

from __future__ import annotations

import importlib
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
from graphql import GraphQLSchema

from codegen import output, pipeline
from keygraph.api import ApiContext, executable, execute
from keygraph.caller import Caller
from keygraph.cursor import CursorCodec
from keygraph.plan import Put
from keygraph.serve import Served, create_app
from keygraph.store import Session, Store
from keygraph.tokens import issue
from tests.conftest import StoreFactory

ROOT = Path(__file__).parents[3]
CASES = ROOT / "tests" / "codegen" / "cases"
CODEC = CursorCodec(b"api-test-cursor-key-" + b"k" * 12)
SECRET = "serve-test-secret-" + "s" * 32
SKUS = ("TEA", "MATE", "COFFEE")


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


async def stock(package: Compiled, store: Store) -> None:
    """The webshop case's products (SKUS), written through its package."""
    models = package.module("models.product")
    money = package.module("models.money").Money(amount=450, currency="EUR")
    for sku in SKUS:
        product = models.Product(sku=sku, title=f"{sku.title()}", price=money)
        await store.put(Put(product.to_item()))


@pytest.fixture
async def shop(
    compiled: Callable[[Path], Compiled], store_factory: StoreFactory, kind: str
) -> tuple[Compiled, Store]:
    package = compiled(CASES / "webshop" / "spec.toml")
    store = await store_factory(kind, package.table)
    await stock(package, store)
    return package, store


@asynccontextmanager
async def served_client(served: Served) -> AsyncIterator[httpx.AsyncClient]:
    """An HTTP client of the app serving `served`, in process."""
    transport = httpx.ASGITransport(app=create_app(served))
    async with httpx.AsyncClient(transport=transport, base_url="http://serve.test") as client:
        yield client


def bearer(tenant: str = "acme", subject: str | None = "u1") -> dict[str, str]:
    """The Authorization header of a member of `tenant`, signed with SECRET."""
    return {"authorization": f"Bearer {issue(SECRET, tenant, subject, roles=['member'])}"}


async def post(client: httpx.AsyncClient, body: Any, **headers: str) -> httpx.Response:
    return await client.post("/graphql", json=body, headers=headers)

"""The shape of the code: imports run down the layers, no import cycle among the
project's modules, and no module of more than 400 lines (generated/ aside: its size follows
the spec).

The import graph is read from the source with `ast`, not by importing anything. An edge
is an import that runs when the module is loaded: at module level, in a class body, under
`try:` or `if` — and under `if TYPE_CHECKING:` too, so an annotation-only import counts as
much as any other (a type that needs one from a module importing it back is a string
annotation or a Strawberry lazy type, not a hidden cycle). An import inside a function
(run when the function is called, to load a heavy library only when it is needed) is an
edge too: deferring an import does not undo the cycle it closes. `from package import
name` is an edge to `package.name` when that is a module, else to `package`.

Layers count every import, a function's too: a module imports only from its own layer's
modules and from the layers below it (LAYERS, and SERVER_LAYERS inside server/). Two
layers on one row are peers: neither imports the other.
"""

from __future__ import annotations

import ast
import functools
from collections.abc import Callable, Iterator
from pathlib import Path

ROOT = Path(__file__).parents[1]
PACKAGES = ("codegen", "keygraph", "server", "bench", "generated", "testkit")
UNSIZED = ("generated",)
MAX_LINES = 400

LAYERS: tuple[tuple[str, ...], ...] = (
    ("keygraph",),
    ("codegen", "generated", "testkit"),
    ("server",),
    ("bench",),
    ("tests",),
)
"""The packages, lowest first: the runtime; the compiler (which uses the runtime's key
codec), the package it generates (which runs on the runtime) and the test doubles (kept out
of the wheel); the app; its benchmarks; the tests."""

SERVER_LAYERS: tuple[tuple[str, ...], ...] = (
    ("__init__", "errors"),
    ("settings",),
    ("domain",),
    ("auth", "extension"),
    ("compiled",),
    ("aws_lambda", "seed", "serving"),
    ("cli",),
    ("__main__",),
)
"""server/'s folders and top-level modules, lowest first: errors; settings; the domain's
writes; tokens, and what the spec's compiled API takes from the domain
(extension/); the compiled API the server answers with (compiled.py); serving, the server on
Lambda and demo data; the commands."""


def _modules(packages: tuple[str, ...] = PACKAGES) -> dict[str, Path]:
    """Every module of the project's packages, by dotted name."""
    found: dict[str, Path] = {}
    for package in packages:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            if parts[-1] == "__init__":
                parts = parts[:-1]
            found[".".join(parts)] = path
    return found


def _load_time_imports(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The import statements run when a module is loaded, function bodies left out."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        else:
            for field in ("body", "orelse", "finalbody"):
                yield from _load_time_imports(getattr(node, field, []))
            for part in [*getattr(node, "handlers", []), *getattr(node, "cases", [])]:
                yield from _load_time_imports(part.body)


def _every_import(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement of a module, those in function bodies too."""
    for statement in body:
        for node in ast.walk(statement):
            if isinstance(node, ast.Import | ast.ImportFrom):
                yield node


def _imports(
    name: str, path: Path, modules: dict[str, Path], *, in_functions: bool = False
) -> set[str]:
    """The project modules `name` imports when it is loaded (with `in_functions`, also
    those its functions import when they run)."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    targets: set[str] = set()
    body = ast.parse(path.read_text(encoding="utf-8")).body
    for node in _every_import(body) if in_functions else _load_time_imports(body):
        if isinstance(node, ast.Import):
            targets.update(alias.name for alias in node.names)
            continue
        base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
        origin = ".".join([*base, *([node.module] if node.module else [])])
        for alias in node.names:
            child = f"{origin}.{alias.name}"
            targets.add(child if child in modules else origin)
    return {target for target in targets if target in modules and target != name}


def import_graph() -> dict[str, set[str]]:
    """Each project module and the project modules it imports, when loaded or in a
    function."""
    modules = _modules()
    return {
        name: _imports(name, path, modules, in_functions=True) for name, path in modules.items()
    }


@functools.cache
def full_import_graph() -> dict[str, set[str]]:
    """Each module of the packages and of the tests, and the modules it imports, when
    loaded or in a function."""
    modules = _modules((*PACKAGES, "tests"))
    return {
        name: _imports(name, path, modules, in_functions=True) for name, path in modules.items()
    }


def _package(module: str) -> str:
    return module.partition(".")[0]


def _server_part(module: str) -> str | None:
    """The folder or top-level module of server/ that `module` is in (`__init__` for the
    package's own); None outside server/."""
    parts = module.split(".")
    if parts[0] != "server":
        return None
    return parts[1] if len(parts) > 1 else "__init__"


def upward_imports(
    graph: dict[str, set[str]],
    layers: tuple[tuple[str, ...], ...],
    layer_of: Callable[[str], str | None],
) -> list[str]:
    """Each import of a module from another layer of its own row or of a row above, as
    `module -> module (layer imports layer, ...)`; and each module in no layer."""
    rank = {layer: row for row, names in enumerate(layers) for layer in names}
    found = []
    for module in sorted(graph):
        here = layer_of(module)
        if here is None:
            continue
        if here not in rank:
            found.append(f"{module}: {here} is in no layer")
            continue
        for target in sorted(graph[module]):
            there = layer_of(target)
            if there is None or there == here or there not in rank:
                continue  # a module in no layer is named as such
            if rank[there] >= rank[here]:
                where = "a peer" if rank[there] == rank[here] else "a higher layer"
                found.append(f"{module} -> {target} ({here} imports {there}, {where})")
    return found


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """One cycle in each tangle, written as the path of imports that closes it."""
    return [_cycle_in(graph, group) for group in tangles(graph)]


def tangles(graph: dict[str, set[str]]) -> list[set[str]]:
    """The groups of modules that import each other, directly or not: the strongly
    connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    groups: list[set[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group: set[str] = set()
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.add(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(group)

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def _cycle_in(graph: dict[str, set[str]], group: set[str]) -> list[str]:
    """A shortest import path from the group's first module back to itself."""
    start = min(group)
    paths = {start: [start]}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for target in sorted(graph[node] & group):
                if target == start:
                    return [*paths[node], start]
                if target not in paths:
                    paths[target] = [*paths[node], target]
                    following.append(target)
        frontier = following
    raise AssertionError(f"no cycle in strongly connected {sorted(group)}")


def test_no_module_imports_itself_back() -> None:
    graph = import_graph()
    found = []
    for group in tangles(graph):
        cycle = _cycle_in(graph, group)
        more = f" (a circle of {', '.join(sorted(group))})" if len(group) >= len(cycle) else ""
        found.append(" -> ".join(cycle) + more)
    assert not found, "import cycles:\n" + "\n".join(found)


def test_packages_import_only_the_layers_below() -> None:
    found = upward_imports(full_import_graph(), LAYERS, _package)
    order = " < ".join(", ".join(row) for row in LAYERS)
    assert not found, f"imports against the layers ({order}):\n" + "\n".join(found)


def test_server_folders_import_only_the_layers_below() -> None:
    found = upward_imports(full_import_graph(), SERVER_LAYERS, _server_part)
    order = " < ".join(", ".join(row) for row in SERVER_LAYERS)
    assert not found, f"imports against server's layers ({order}):\n" + "\n".join(found)


def test_an_upward_import_is_named() -> None:
    graph = {"low.a": set(), "mid.b": {"low.a"}, "top.c": {"mid.b"}, "peer.d": {"low.a"}}
    layers = (("low",), ("mid", "peer"), ("top",))
    assert upward_imports(graph, layers, _package) == []
    graph["low.a"] = {"top.c"}
    graph["peer.d"] = {"mid.b"}
    assert upward_imports(graph, layers, _package) == [
        "low.a -> top.c (low imports top, a higher layer)",
        "peer.d -> mid.b (peer imports mid, a peer)",
    ]
    assert upward_imports({"odd.x": set()}, layers, _package) == ["odd.x: odd is in no layer"]


def test_a_cycle_is_found_and_named() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a", "d"}, "d": set(), "e": {"d"}}
    assert cycles(graph) == [["a", "b", "c", "a"]]
    assert tangles({**graph, "b": {"a", "c"}}) == [{"a", "b", "c"}]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_type_checking_and_relative_imports_are_edges(tmp_path: Path) -> None:
    source = tmp_path / "pkg"
    source.mkdir()
    (source / "__init__.py").write_text("")
    (source / "one.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from pkg.two import Two\n"
        "def later() -> None:\n    from pkg import three\n"
    )
    (source / "two.py").write_text("from . import one\nfrom .three import x\n")
    (source / "three.py").write_text("x = 1\n")
    modules = {
        "pkg": source / "__init__.py",
        "pkg.one": source / "one.py",
        "pkg.two": source / "two.py",
        "pkg.three": source / "three.py",
    }
    assert _imports("pkg.one", modules["pkg.one"], modules) == {"pkg.two"}
    every = _imports("pkg.one", modules["pkg.one"], modules, in_functions=True)
    assert every == {"pkg.two", "pkg.three"}
    assert _imports("pkg.two", modules["pkg.two"], modules) == {"pkg.one", "pkg.three"}


def test_no_module_is_over_400_lines() -> None:
    long = {
        name: lines
        for name, path in _modules().items()
        if name.split(".")[0] not in UNSIZED
        and (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert not long, f"modules over {MAX_LINES} lines, to split by concern: {long}"

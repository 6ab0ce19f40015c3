"""The docs' code blocks, run: the README's first spec and the library example compiled and
run as written (in a temporary directory instead of /tmp), every GraphQL operation valid
against the API's schema and within keygraph serve's limits, every TOML and JSON block
parsed, the authorization example the repo's own spec, and every command line a real
command."""

from __future__ import annotations

import importlib
import json
import os
import re
import shlex
import subprocess
import sys
import tomllib
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from graphql import validate

from keygraph.serve.document_size import check_size
from keygraph.serve.limits import MAX_DOCUMENT, MAX_TOKENS, parse_limited
from keygraph.serve.served import MAX_ROOT_FIELDS
from keygraph.stores.dynamodb.local import free_port
from tests.api_schema import LIMITS, SCHEMA
from tests.doc_blocks import PAGES, ROOT, blocks, languages
from tests.waiting import answering

README = ROOT / "README.md"
LIBRARY = ROOT / "docs" / "library.md"


def _compile_and_run(page: Path, heading: str, scratch: str, tmp_path: Path) -> list[str]:
    """Write the TOML spec (if any) of the page's section under `heading` where it says, run
    its `keygraph generate` command and its Python program, in `tmp_path` instead of
    `scratch`; the program's lines."""
    section = page.read_text().split(heading, 1)[1].split("\n## ", 1)[0]
    text = section.replace(scratch, str(tmp_path))
    spec = re.search(r"```toml\n(.*?)```", text, re.S)
    if spec is not None:
        (tmp_path / "spec.toml").write_text(spec.group(1))
    command = next(
        b for b in re.findall(r"```sh\n(.*?)```", text, re.S) if "keygraph generate" in b
    )
    argv = shlex.split(command)
    assert argv[0] == ".venv/bin/keygraph"
    generate = [sys.executable, "-m", "codegen", *argv[1:]]
    subprocess.run(generate, cwd=ROOT, check=True, capture_output=True)
    program = re.search(r"```python\n(.*?)```", text, re.S)
    assert program is not None
    done = subprocess.run(
        [sys.executable, "-c", program.group(1)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout.splitlines()


def test_the_first_spec_runs(tmp_path: Path) -> None:
    lines = _compile_and_run(README, "## A first spec", "/tmp/first", tmp_path)
    assert lines == ["author_id='ada' note_id='n1' text='note n1'", "['n1', 'n2']"]


def test_the_first_spec_is_served_as_the_readme_says(tmp_path: Path) -> None:
    _compile_and_run(README, "## A first spec", "/tmp/first", tmp_path)
    section = README.read_text().split("## A first spec", 1)[1].split("\n## ", 1)[0]
    block = next(b for b in re.findall(r"```sh\n(.*?)```", section, re.S) if "serve" in b)
    port = str(free_port())
    lines = block.replace("/tmp/first", str(tmp_path)).replace("8001", port).splitlines()
    secret = lines[0].removeprefix("export KEYGRAPH_JWT_SECRET=")
    env = {**os.environ, "KEYGRAPH_JWT_SECRET": secret}
    serve = shlex.split(lines[1].removesuffix("&"))
    assert serve[:2] == [".venv/bin/keygraph", "serve"]
    token_argv = shlex.split(lines[2].split("$(", 1)[1].rstrip(")"))
    payloads = [
        json.loads(shlex.split(line.strip().removesuffix("\\"))[1])
        for line in lines
        if line.strip().startswith("-d ")
    ]
    with subprocess.Popen([sys.executable, "-m", "codegen", *serve[1:]], cwd=ROOT, env=env) as p:
        try:
            token = subprocess.run(
                [sys.executable, "-m", "codegen", *token_argv[1:]],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout.strip()
            url = f"http://127.0.0.1:{port}/graphql"
            answer, written = (_post_when_up(url, token, payload, p) for payload in payloads)
        finally:
            p.terminate()
    assert written["data"] == {"createNote": {"note": {"noteId": "n3"}}}
    assert written["extensions"]["cost"]["actual"]["writeUnits"] > 0
    assert "errors" not in written
    edges = answer["data"]["notesByAuthor"]["edges"]
    assert [edge["node"] for edge in edges] == [
        {"noteId": "n1", "text": "note n1"},
        {"noteId": "n2", "text": "note n2"},
    ]


def _post_when_up(url: str, token: str, payload: object, process: subprocess.Popen[bytes]) -> Any:
    """The answer to `payload` once the server answers at all."""
    request = urllib.request.Request(
        url,
        data=json.dumps(payload).encode(),
        headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
    )
    answering(url.replace("/graphql", "/healthz"), lambda: process.poll() is None)
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def test_the_any_spec_example_runs(tmp_path: Path) -> None:
    lines = _compile_and_run(LIBRARY, "## One runtime, any spec", "/tmp/shop", tmp_path)
    assert lines[0].startswith("sku='TEA' title='Green tea'")
    assert lines[1].startswith("[Product(sku='TEA'")
    assert lines[2].count("OrderItem(") == 2
    assert lines[2].startswith("[Order(customer_id='c1', order_id='O1'")
    assert lines[3].startswith("[OrderByStatusSummary(customer_id='c1', order_id='O1'")


def test_every_block_is_of_a_language_a_test_reads() -> None:
    assert languages() <= {"sh", "graphql", "toml", "json", "python", "text"}


def test_the_examples_import_only_public_names() -> None:
    """What the Python blocks import from keygraph is in its modules' `__all__`."""
    found = [
        found
        for block in blocks("python")
        for found in re.findall(r"^from (keygraph[\w.]*) import (\([^)]*\)|[^#\n]+)", block, re.M)
    ]
    assert len(found) >= 6
    for module, names in found:
        public = importlib.import_module(module).__all__
        for name in filter(None, (n.strip() for n in names.strip("()").split(","))):
            assert name in public, f"{module}.{name}"


def test_the_graphql_operations_are_valid() -> None:
    found = blocks("graphql")
    assert len(found) >= 2
    for block in found:
        document = parse_limited(block, MAX_TOKENS, MAX_DOCUMENT)
        assert check_size(document, LIMITS, MAX_ROOT_FIELDS) == [], block
        assert validate(SCHEMA, document) == [], block


def test_the_toml_and_json_blocks_parse() -> None:
    for block in blocks("toml"):
        tomllib.loads(block)
    for block in blocks("json"):
        json.loads(block if block.lstrip().startswith("{") else "{" + block + "}")


def test_the_authorization_example_is_the_repo_spec() -> None:
    """Every setting the rules example shows is a line of access_patterns.toml."""
    spec = (ROOT / "access_patterns.toml").read_text().splitlines()
    shown = [b for b in blocks("toml", ROOT / "docs" / "spec.md") if "[authorization]" in b]
    assert len(shown) == 1
    for line in shown[0].splitlines():
        if "=" in line and not line.startswith("#"):
            assert line in spec, line


def _commands() -> list[list[str]]:
    """Each command line of the sh blocks, as words (comments and continuations removed)."""
    found = []
    for block in blocks("sh"):
        for line in block.replace("\\\n", " ").splitlines():
            words = shlex.split(line, comments=True)
            if words:
                found.append(words)
    return found


def _subcommands(words: list[str]) -> list[str]:
    """`.venv/bin/python -m server table create|describe ... [--x]` -> each named command."""
    head = []
    for word in words[3:]:
        if word.startswith(("-", "[", "<", ">", "|")) or word[:1].isupper() or "/" in word:
            break
        head.append(word)
    if not head:
        return [""]
    return [f"{' '.join(head[:-1])} {last}".strip() for last in head[-1].split("|")]


def _python(words: list[str]) -> list[str] | None:
    """A command line as `python -m <module> ...` words, or None when it runs no module of
    ours (`keygraph` is `python -m codegen`)."""
    if words[:2] == [".venv/bin/python", "-m"]:
        return words
    if words[0] in ("keygraph", ".venv/bin/keygraph"):
        return [".venv/bin/python", "-m", "codegen", *words[1:]]
    return None


@pytest.mark.parametrize(
    "words", [w for w in map(_python, _commands()) if w is not None], ids=shlex.join
)
def test_each_python_command_exists(words: list[str]) -> None:
    for sub in _subcommands(words):
        argv = [sys.executable, "-m", words[2], *sub.split(), "--help"]
        done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, check=False)
        assert done.returncode == 0, (argv, done.stderr)


def test_each_make_target_exists() -> None:
    targets = set(re.findall(r"^([a-z-]+):", (ROOT / "Makefile").read_text(), re.M))
    named = {w[1] for w in _commands() if w[0] == "make"}
    assert named
    assert named <= targets
    for page in PAGES:
        for target in re.findall(r"`make ([a-z-]+)`", page.read_text()):
            assert target in targets, (page.name, target)


def test_the_readme_is_a_landing_page() -> None:
    """At most 200 lines, and the path through the docs linked from it."""
    text = README.read_text()
    assert len(text.splitlines()) <= 200
    assert "](docs/README.md)" in text


def test_the_docs_are_a_path() -> None:
    """docs/README.md links every page of docs/ once, the tutorial before the reference."""
    path = (ROOT / "docs" / "README.md").read_text()
    linked = re.findall(r"\]\(([\w-]+\.md)\)", path)
    pages = {page.name for page in (ROOT / "docs").glob("*.md")} - {"README.md"}
    assert sorted(linked) == sorted(pages)
    assert linked.index("adding-a-pattern.md") < linked.index("spec.md")
    assert linked.index("architecture.md") < linked.index("adding-a-pattern.md")


def test_every_link_stays_in_the_repository_and_resolves() -> None:
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", page.read_text()):
            assert not target.startswith(("http://", "https://", "mailto:")), (page.name, target)
            resolved = (page.parent / target).resolve()
            assert resolved.is_relative_to(ROOT.resolve()), (page.name, target)
            assert resolved.exists(), (page.name, target)


def test_every_python_block_compiles() -> None:
    for block in blocks("python"):
        compile(block, "<docs>", "exec")


def test_the_stream_example_runs(tmp_path: Path) -> None:
    """docs/streams.md's reader, run on a file holding one write."""
    program = blocks("python", ROOT / "docs" / "streams.md")[0]
    path = tmp_path / "keygraph.sqlite3"
    assert '"data/keygraph.sqlite3"' in program
    seed = (
        "import asyncio\n"
        "from generated.table import TABLE\n"
        "from keygraph.plan import Put\n"
        "from datetime import UTC, datetime\n"
        "from generated.models.group import Group\n"
        "from keygraph.stores import EmbeddedStore\n"
        "async def seed() -> None:\n"
        f"    store = EmbeddedStore(TABLE, path={str(path)!r})\n"
        "    group = Group(group_id='g1', name='Ops', created_at=datetime.now(UTC))\n"
        "    await store.put(Put(group.to_item('acme')))\n"
        "    await store.close()\n"
        "asyncio.run(seed())\n"
    )
    subprocess.run([sys.executable, "-c", seed], cwd=ROOT, check=True, capture_output=True)
    done = subprocess.run(
        [sys.executable, "-c", program.replace('"data/keygraph.sqlite3"', repr(str(path)))],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    )
    assert done.stdout.startswith("INSERT Group None group_id='g1' name='Ops'")

"""The results as markdown tables, and their place in bench/README.md."""

from __future__ import annotations

from pathlib import Path
from typing import Any

START = "<!-- bench:graphql:results:start -->"
END = "<!-- bench:graphql:results:end -->"


def _num(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return str(value)
    return f"{float(value):,.{digits}f}"


def _ratio(value: Any) -> str:
    return "-" if value is None else f"{float(value):.2f}x"


def _counts(op: dict[str, Any], variant: str) -> str:
    found = op.get("counts", {}).get(variant)
    if not found:
        return "-"
    return f"{found['calls']} / {found['waves']}"


def _mode_cells(op: dict[str, Any], mode: str) -> list[str]:
    block = op.get(mode)
    if not block:
        return ["-"] * 6
    kg = block["keygraph"]
    core = block.get("graphql-core") or {}
    return [
        _num(kg["rps"], 0),
        _num(kg["p50_ms"], 2),
        _num(core.get("p50_ms"), 2),
        _ratio(block.get("vs_floor")),
        _ratio(block.get("graphql_core_vs_floor")),
        _ratio(block.get("vs_graphql_core")),
    ]


def _cpu_cells(op: dict[str, Any]) -> list[str]:
    """The servers' CPU per request over HTTP, and keygraph's ratios of it."""
    block = op.get("http")
    if not block:
        return ["-"] * 5
    return [
        _num(block["keygraph"].get("cpu_ms"), 2),
        _num((block.get("graphql-core") or {}).get("cpu_ms"), 2),
        _num((block.get("floor") or {}).get("cpu_ms"), 2),
        _ratio(block.get("cpu_vs_graphql_core")),
        _ratio(block.get("cpu_vs_floor")),
    ]


HEADER = (
    "| op | what | levels | calls / waves "
    "| in-proc req/s | p50 ms | graphql-core p50 | ÷ floor | graphql-core ÷ floor "
    "| ÷ graphql-core "
    "| HTTP req/s | p50 ms | graphql-core p50 | ÷ floor | graphql-core ÷ floor "
    "| ÷ graphql-core "
    "| HTTP CPU ms/req | graphql-core CPU | floor CPU | CPU graphql-core ÷ keygraph "
    "| CPU floor ÷ keygraph |"
)


def _dataset_line(dataset: dict[str, Any]) -> str:
    sizes = ", ".join(f"{key} {value:,}" for key, value in dataset["sizes"].items())
    return f"Data: {dataset['tenants']} tenants, each with {sizes}; rng seed {dataset['rng_seed']}."


def store_table(store: str, block: dict[str, Any]) -> str:
    lines = [f"#### {store}", "", _dataset_line(block["dataset"]), ""]
    lines += [HEADER, "|" + "---|" * HEADER.count(" | ") + "---|"]
    for name, op in block["operations"].items():
        cells = [
            name,
            op["title"],
            str(op["levels"]),
            _counts(op, "keygraph"),
            *_mode_cells(op, "inprocess"),
            *_mode_cells(op, "http"),
            *_cpu_cells(op),
        ]
        lines.append("| " + " | ".join(cells) + " |")
    rss = block.get("peak_rss_mib") or {}
    if rss:
        parts = ", ".join(f"{name} {_num(value, 0)} MiB" for name, value in rss.items())
        lines += ["", f"Peak RSS of the HTTP server processes: {parts}."]
    return "\n".join(lines)


def _run_line(machine: dict[str, Any], mode: str) -> str:
    return (
        f"Run: {machine['date']}, mode `{mode}`. Machine: {machine['nproc']} cores "
        f"({machine['cpu_model']}), {machine['ram_gib']} GiB RAM, Python {machine['python']}."
    )


def render(results: dict[str, Any]) -> str:
    """The results as markdown. A store measured in an earlier run than the others (its
    block carries its own `machine`) gets its own run line."""
    lines = [_run_line(results["machine"], results["mode"]), ""]
    for store, block in results["stores"].items():
        lines.append(store_table(store, block))
        if "machine" in block:
            lines += ["", f"_{store}: {_run_line(block['machine'], results['mode'])}_"]
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def update_readme(readme: Path, table: str) -> None:
    """Replace the text between the result markers of the README's GraphQL section."""
    text = readme.read_text()
    head, start, rest = text.partition(START)
    _, end, tail = rest.partition(END)
    if not start or not end:
        raise ValueError(f"{readme} lacks the {START} / {END} markers")
    readme.write_text(f"{head}{START}\n{table}{END}{tail}")

"""Applying a problem's fix to spec text, as its author would: the line of each edited key
replaced, or the key added under its table's header (the table added when missing)."""

from __future__ import annotations

from collections.abc import Iterable

from codegen.diagnostics import Edit, index_lines, split_path


def apply(text: str, edits: Iterable[Edit]) -> str:
    lines = text.splitlines()
    for edit in edits:
        index = index_lines("\n".join(lines))
        line = f"{edit.key} = {edit.value}"
        at = [number for keys, number in index if keys == split_path(edit.path)]
        header = [number for keys, number in index if keys == split_path(edit.section)]
        if at:
            lines[at[0] - 1] = line
        elif header:
            lines.insert(header[0], line)
        else:
            lines += ["", f"[{edit.section}]", line]
    return "\n".join(lines) + "\n"

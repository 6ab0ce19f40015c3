"""What the benchmark ran on, and the memory a process used (Linux /proc)."""

from __future__ import annotations

import os
import platform
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def _proc_field(path: Path, name: str) -> str | None:
    try:
        text = path.read_text()
    except OSError:
        return None
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep and key.strip() == name:
            return value.strip()
    return None


def _kib_to_mib(value: str | None) -> float | None:
    if value is None:
        return None
    number, _, unit = value.partition(" ")
    if unit.strip() != "kB":
        return None
    return int(number) / 1024


def peak_rss_mib(pid: int | None = None) -> float | None:
    """A process's peak resident set size (VmHWM) in MiB; None once the process is gone."""
    return _kib_to_mib(_proc_field(Path(f"/proc/{pid or os.getpid()}/status"), "VmHWM"))


def rss_mib(pid: int | None = None) -> float | None:
    """A process's current resident set size (VmRSS) in MiB."""
    return _kib_to_mib(_proc_field(Path(f"/proc/{pid or os.getpid()}/status"), "VmRSS"))


def machine_info() -> dict[str, Any]:
    mem = _kib_to_mib(_proc_field(Path("/proc/meminfo"), "MemTotal"))
    return {
        "nproc": os.cpu_count(),
        "cpu_model": _proc_field(Path("/proc/cpuinfo"), "model name") or platform.processor(),
        "ram_gib": round(mem / 1024, 1) if mem is not None else None,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC"),
    }


def _stat_cpu_ticks(pid: int) -> int:
    """utime + stime of one process (all its threads), in clock ticks; 0 once it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    fields = text.rpartition(")")[2].split()  # after the command name, which may hold spaces
    return int(fields[11]) + int(fields[12])  # fields 14 and 15 of proc(5)


def _descendants(pid: int) -> list[int]:
    found: list[int] = []
    pending = [pid]
    while pending:
        parent = pending.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                children = (task / "children").read_text().split()
            except OSError:
                continue
            pending += [int(child) for child in children]
            found += [int(child) for child in children]
    return found


def _schedstat_cpu_s(pid: int) -> float:
    """The time on CPU of a process's live threads, from their schedstat (nanoseconds); 0
    once it is gone."""
    total = 0
    for task in Path(f"/proc/{pid}/task").glob("*"):
        try:
            total += int((task / "schedstat").read_text().split()[0])
        except (OSError, IndexError, ValueError):
            continue
    return total / 1e9


def process_cpu_s(pid: int) -> float:
    """The CPU time (user + system) a process and its live descendants have used so far, in
    seconds: a server's own cost, read from outside it (a server run by a supervisor counts
    its workers). Per process, the larger of its stat ticks (which count threads that have
    ended, in 10 ms steps) and its live threads' schedstat (exact), so a short run does not
    read as none."""
    tick = os.sysconf("SC_CLK_TCK")
    return sum(
        max(_stat_cpu_ticks(each) / tick, _schedstat_cpu_s(each))
        for each in [pid, *_descendants(pid)]
    )


def memory_kib(pid: int) -> dict[str, int]:
    """VmRSS and its parts (RssAnon, RssFile, RssShmem) of a process, in KiB, and HeapAnon:
    the part of RssAnon in glibc's main heap (the `[heap]` mapping); the rest of RssAnon is
    mapped apart from it (Python's allocator arenas, glibc's large blocks and thread arenas)."""
    found = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name, _, value = line.partition(":")
        if name in ("VmRSS", "RssAnon", "RssFile", "RssShmem"):
            found[name] = int(value.split()[0])
    found["HeapAnon"] = _heap_anon_kib(pid)
    return found


def _heap_anon_kib(pid: int) -> int:
    """The anonymous KiB of a process's `[heap]` mapping (0 when it has none)."""
    in_heap, kib = False, 0
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        first, _, rest = line.partition(" ")
        if "-" in first and not first.endswith(":"):  # a mapping's header line
            in_heap = rest.rstrip().endswith("[heap]")
        elif in_heap and first == "Anonymous:":
            kib += int(rest.split()[0])
    return kib

"""Which process runs a request, and whether such a process is gone: an identity made of the
host's name, its boot, the pid namespace, the pid and the process's start time, so that a
process on the same machine can tell for certain that another has died (its pid is free, or
taken by a later process). Anywhere else, or without Linux's /proc, nothing is certain."""

from __future__ import annotations

import functools
import os
import socket
from pathlib import Path

_PROC = Path("/proc")
_SEP = "|"


def identity() -> str:
    """This process's identity (a forked worker has its own)."""
    return _identity(os.getpid())


@functools.cache
def _identity(pid: int) -> str:
    return _SEP.join((_machine(), str(pid), _started(pid) or "?"))


def gone(owner: str) -> bool:
    """Whether the process named `owner` has certainly ended: it ran on this machine (host,
    boot and pid namespace all ours) and its pid is now free or another process's."""
    machine, _, rest = owner.rpartition(_SEP)
    machine, _, pid = machine.rpartition(_SEP)
    if machine != _machine() or rest == "?" or not pid.isdigit():
        return False
    return _started(int(pid)) != rest


@functools.cache
def _machine() -> str:
    """This host, its boot and our pid namespace: where pids mean the same processes."""
    boot = _read(_PROC / "sys/kernel/random/boot_id") or "?"
    try:
        namespace = os.readlink(_PROC / "self/ns/pid")
    except OSError:
        namespace = "?"
    return _SEP.join((socket.gethostname(), boot, namespace))


def _started(pid: int) -> str | None:
    """When process `pid` started, in clock ticks since boot; None when there is none."""
    stat = _read(_PROC / str(pid) / "stat")
    if stat is None:
        return None
    fields = stat.rpartition(")")[2].split()  # after the command's name, which may hold spaces
    return fields[19] if len(fields) > 19 else None  # field 22 of proc(5): starttime


def _read(path: Path) -> str | None:
    try:
        return path.read_text().strip()
    except OSError:
        return None

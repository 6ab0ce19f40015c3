"""Which process holds a TCP socket, read from Linux's /proc: a server's child processes,
whether one is gone, the worker that accepted a client's connection, whether a worker still
listens on its port."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

ESTABLISHED = "01"
LISTEN = "0A"


def children(parent: int, match: str) -> list[int]:
    """Pids of `parent`'s child processes whose command line holds `match`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat.rpartition(")")[2].split()[1]) == parent and match in cmdline:
            found.append(int(entry.name))
    return sorted(found)


def gone(pid: int) -> bool:
    """Whether the process `pid` has exited (a zombie waiting to be reaped included)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    return stat.exists() and " Z " in stat.read_text()


def socket_inodes(pid: int) -> set[str]:
    """The inodes of the sockets the process `pid` holds open."""
    inodes = set()
    with contextlib.suppress(OSError):
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with contextlib.suppress(OSError):
                target = fd.readlink().name
                if target.startswith("socket:["):
                    inodes.add(target[len("socket:[") : -1])
    return inodes


def _sockets() -> Iterator[tuple[int, int, str, str]]:
    """Each TCP socket's local port, remote port, state and inode."""
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            local = int(fields[1].rpartition(":")[2], 16)
            remote = int(fields[2].rpartition(":")[2], 16)
            yield local, remote, fields[3], fields[9]


def connections(pid: int, port: int) -> int:
    """Established connections to `port` that the process `pid` holds."""
    inodes = socket_inodes(pid)
    return sum(
        1
        for local, _remote, state, inode in _sockets()
        if local == port and state == ESTABLISHED and inode in inodes
    )


def holder(pids: list[int], port: int, client_port: int) -> int | None:
    """Which of `pids` holds the server's end (on `port`) of the connection a client made
    from `client_port`; None when none does."""
    ends = {
        inode
        for local, remote, state, inode in _sockets()
        if local == port and remote == client_port and state == ESTABLISHED
    }
    held = [pid for pid in pids if ends & socket_inodes(pid)]
    return held[0] if len(held) == 1 else None


def listening(pid: int, port: int) -> bool:
    """Whether the process `pid` holds a socket listening on `port`."""
    inodes = socket_inodes(pid)
    return any(
        local == port and state == LISTEN and inode in inodes
        for local, _r, state, inode in _sockets()
    )

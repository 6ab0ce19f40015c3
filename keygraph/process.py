"""Child processes that never outlive their parent (Linux): the kernel sends the child a
signal when the thread that started it exits, however it exits, SIGKILL included.

`die_with_parent()` asks for that from inside the child. `orphan_proof(command)` wraps a
command in a small launcher that asks for it and then execs the command, which keeps the
request (execve does): no code runs between fork and exec in a threaded parent.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import signal
import sys
from collections.abc import Sequence

_PR_SET_PDEATHSIG = 1


def die_with_parent(sig: int = signal.SIGTERM, parent: int | None = None) -> None:
    """Ask the kernel to send `sig` to this process when its parent exits; when the parent
    `parent` is already gone, exit at once. Does nothing off Linux."""
    if not sys.platform.startswith("linux"):
        return
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    libc.prctl(_PR_SET_PDEATHSIG, sig, 0, 0, 0)
    if parent is not None and os.getppid() != parent:
        os._exit(1)


def orphan_proof(command: Sequence[str]) -> list[str]:
    """`command`, run so that it gets SIGTERM when this process exits."""
    return [sys.executable, "-m", "keygraph.process", str(os.getpid()), *command]


def _launch(argv: Sequence[str]) -> None:
    parent, program, *_ = argv
    die_with_parent(signal.SIGTERM, int(parent))
    os.execv(program, list(argv[1:]))


if __name__ == "__main__":
    _launch(sys.argv[1:])

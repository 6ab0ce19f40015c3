"""Process identities: a process of this machine that has ended is known to be gone; one
that runs, or one of another machine, is not."""

from __future__ import annotations

import subprocess
import sys

import pytest

from server.edge import owners


def test_only_an_ended_process_of_this_machine_is_gone() -> None:
    me = owners.identity()
    machine_and_pid, _, started = me.rpartition("|")
    if not started.isdigit():
        pytest.skip("process start times need Linux's /proc")
    assert not owners.gone(me)
    assert owners.gone(f"{machine_and_pid}|{int(started) - 1}")  # its pid since reused
    child = subprocess.Popen([sys.executable, "-c", "import sys; sys.stdin.read()"], stdin=-1)
    theirs = owners._identity(child.pid)
    assert not owners.gone(theirs)
    assert child.stdin is not None
    child.stdin.close()
    child.wait()
    assert owners.gone(theirs)
    machine = machine_and_pid.rpartition("|")[0]
    assert not owners.gone(me.replace(machine, "elsewhere|boot|pid:[1]"))  # cannot tell
    assert not owners.gone("not an identity")

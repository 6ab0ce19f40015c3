import os
import signal
import subprocess
import sys
import time

from bench.machine import process_cpu_s

CHILD = "import time\nend = time.process_time() + 0.6\nwhile time.process_time() < end: pass\n"
PARENT = (
    "import subprocess, sys, time\n"
    f"child = subprocess.Popen([sys.executable, '-c', {CHILD + 'time.sleep(30)'!r}])\n"
    "print(child.pid, flush=True)\n"
    "time.sleep(30)\n"
)


def test_a_process_cpu_time_counts_its_live_children() -> None:
    parent = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True)
    assert parent.stdout is not None
    child = int(parent.stdout.readline())
    try:
        deadline = time.monotonic() + 20
        while process_cpu_s(child) < 0.35 and time.monotonic() < deadline:
            time.sleep(0.1)
        spent = process_cpu_s(child)
        assert spent >= 0.35  # of the child's 0.6 s: clock ticks round down
        assert process_cpu_s(parent.pid) >= spent  # the parent's time holds its child's
    finally:
        os.kill(child, signal.SIGKILL)
        parent.kill()
        parent.wait()
        parent.stdout.close()


def test_a_process_gone_has_used_nothing_more() -> None:
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    assert process_cpu_s(gone.pid) == 0.0

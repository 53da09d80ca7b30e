"""testing.procfs.context_switches (the load bench's context switches per command): a thread
that waits is switched out voluntarily, once per wait, counted over all of a process's
threads."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from testing.procfs import context_switches

# After a line on stdin, a second thread waits 100 times, says so, and stays alive (as do
# its counts) until the next line.
_PROGRAM = textwrap.dedent(
    """
    import sys, threading, time

    release = threading.Event()

    def waits():
        for _ in range(100):
            time.sleep(0.001)
        print("waited", flush=True)
        release.wait()

    sys.stdin.readline()
    worker = threading.Thread(target=waits)
    worker.start()
    sys.stdin.readline()
    release.set()
    worker.join()
    """
)


def test_each_wait_of_any_thread_counts_as_a_voluntary_switch() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", _PROGRAM], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert child.stdin is not None and child.stdout is not None
        before = context_switches(child.pid)
        child.stdin.write("go\n")
        child.stdin.flush()
        assert child.stdout.readline() == "waited\n"
        after = context_switches(child.pid)
        assert after[0] - before[0] >= 100  # the second thread's sleeps, summed in
        assert after[1] >= before[1]
        child.stdin.write("end\n")
        child.stdin.flush()
        assert child.wait(timeout=10) == 0
    finally:
        child.kill()
        child.wait()


def test_a_process_that_is_gone_has_no_switches() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    assert context_switches(child.pid) == (0, 0)

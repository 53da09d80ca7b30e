"""Pinning (issue 22): every thread of a process runs on the cores asked for."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from testing.pinning import parse_cpus, pin

#: A child with a few threads that idle until killed.
THREADS = (
    "import threading, time\n"
    "for _ in range(3): threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
    "print('up', flush=True); time.sleep(60)\n"
)


def _allowed(pid: int) -> set[str]:
    lists = set()
    for tid in os.listdir(f"/proc/{pid}/task"):
        status = Path(f"/proc/{pid}/task/{tid}/status").read_text()
        (line,) = [x for x in status.splitlines() if x.startswith("Cpus_allowed_list:")]
        lists.add(line.split(":")[1].strip())
    return lists


def test_parse_cpus_reads_lists_and_ranges_and_refuses_what_is_not_here() -> None:
    assert parse_cpus("") == ()
    assert parse_cpus("0") == (0,)
    here = sorted(os.sched_getaffinity(0))
    assert parse_cpus(f"{here[0]}-{here[-1]}") == tuple(range(here[0], here[-1] + 1))
    for bad in ("x", "2-1", "-1", f"{max(here) + 1}"):
        with pytest.raises(ValueError):
            parse_cpus(bad)


def test_every_thread_of_a_pinned_process_runs_on_the_cores_asked_for() -> None:
    cpu = sorted(os.sched_getaffinity(0))[0]
    child = subprocess.Popen([sys.executable, "-c", THREADS], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None and child.stdout.readline() == "up\n"
        assert len(os.listdir(f"/proc/{child.pid}/task")) >= 4
        pin(child.pid, (cpu,))
        assert _allowed(child.pid) == {str(cpu)}
    finally:
        child.kill()
        child.wait()

"""What Linux ``/proc`` says about a process and the machine: memory, CPU time, thread states.

Used by the chaos tests (memory of the replicas, frozen processes) and the benchmarks (memory
per stream, CPU per command). Every reader returns None (or 0) for a process that is gone
rather than raising, unless its docstring says otherwise.
"""

from __future__ import annotations

import contextlib
import os
import re
from pathlib import Path

__all__ = [
    "CLOCK_TICKS",
    "all_threads_stopped",
    "any_thread_stopped",
    "context_switches",
    "cpu_times",
    "machine_busy_s",
    "peak_rss_kb",
    "process_memory_kb",
    "rss_mb",
    "status_kb",
    "thread_states",
]

#: Ticks per second of the CPU times in ``/proc``.
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")


def status_kb(pid: int, field: str) -> int | None:
    """A ``kB`` field of ``/proc/<pid>/status`` (``VmRSS``, ``VmHWM``, ...); None if unknown."""
    try:
        text = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return None
    found = re.search(rf"^{field}:\s+(\d+) kB", text, re.MULTILINE)
    return int(found.group(1)) if found else None


def rss_mb(pid: int) -> float:
    """Resident memory of a process in MB (``VmRSS``); 0 when it is gone."""
    return (status_kb(pid, "VmRSS") or 0) / 1024


def peak_rss_kb(pid: int) -> int | None:
    """Peak resident memory (``VmHWM``) in KB, None if unknown."""
    return status_kb(pid, "VmHWM")


def process_memory_kb(pid: int) -> dict[str, int | None]:
    """``VmRSS`` (``/proc/<pid>/status``) and ``Pss`` (``smaps_rollup``, None if absent), KB."""
    pss: int | None = None
    with contextlib.suppress(OSError):
        found = re.search(
            r"^Pss:\s+(\d+) kB", Path(f"/proc/{pid}/smaps_rollup").read_text(), re.MULTILINE
        )
        pss = int(found.group(1)) if found else None
    return {"rss_kb": status_kb(pid, "VmRSS"), "pss_kb": pss}


def cpu_times(pid: int) -> tuple[float, float]:
    """(user, system) CPU seconds of a process so far (``/proc/<pid>/stat``, all its threads);
    raises ``OSError`` when it is gone."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return int(fields[11]) / CLOCK_TICKS, int(fields[12]) / CLOCK_TICKS


def context_switches(pid: int) -> tuple[int, int]:
    """(voluntary, involuntary) context switches of a process so far, summed over its live
    threads (``/proc/<pid>/task/*/status``; a thread that ended takes its own with it);
    (0, 0) when it is gone. Voluntary: the thread waited (for I/O, a lock, a timer);
    involuntary: the scheduler took the core from it (another thread's turn)."""
    voluntary = involuntary = 0
    with contextlib.suppress(OSError):
        for task in Path(f"/proc/{pid}/task").iterdir():
            with contextlib.suppress(OSError):
                text = (task / "status").read_text()
                for name, value in re.findall(
                    r"^(voluntary|nonvoluntary)_ctxt_switches:\s+(\d+)", text, re.MULTILINE
                ):
                    if name == "voluntary":
                        voluntary += int(value)
                    else:
                        involuntary += int(value)
    return voluntary, involuntary


def machine_busy_s() -> float:
    """CPU seconds the whole machine has been busy (``/proc/stat``: all but idle and iowait)."""
    fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    ticks = [int(v) for v in fields[:8]]  # user nice system idle iowait irq softirq steal
    return (sum(ticks) - ticks[3] - ticks[4]) / CLOCK_TICKS


def thread_states(pid: int) -> list[str]:
    """Scheduler state letter of every thread of ``pid``; [] if unknown."""
    states = []
    for stat in Path(f"/proc/{pid}/task").glob("*/stat"):
        try:
            text = stat.read_text()
        except OSError:
            continue  # the thread just exited
        # Format: "tid (comm) S ..."; comm may contain spaces or parentheses.
        states.append(text[text.rindex(")") + 2])
    return states


def all_threads_stopped(pid: int) -> bool:
    """Every thread of ``pid`` is stopped (SIGSTOP delivered: state ``t`` or ``T``)."""
    return all(state in "tT" for state in thread_states(pid))


def any_thread_stopped(pid: int) -> bool:
    """Some thread of ``pid`` is still stopped."""
    return any(state in "tT" for state in thread_states(pid))

"""testing.stalls (``bench.load --stalls``): the probe notes each process's collections and
event-loop stalls with wall-clock instants, and each slow command is told apart by what it
was in flight during."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from testing.stalls import Stall, attribute, describe, probe_env, read_stalls

# A process that blocks its event loop for 30 ms, then makes a long full collection; it
# prints the wall-clock instant the block began (on a busy machine the probe may also note
# a short late wake-up before it, so the test finds the block by its instant).
_PROGRAM = textwrap.dedent(
    """
    import asyncio, gc, time, uvloop

    async def main():
        await asyncio.sleep(0.05)
        print(f"{time.time():.6f}", flush=True)
        time.sleep(0.03)  # the loop is blocked
        await asyncio.sleep(0.05)
        kept = [[i] for i in range(400_000)]  # tracked objects for the collector to walk
        gc.collect()
        await asyncio.sleep(0.05)

    uvloop.run(main())
    """
)

#: The probe's period (``PERIOD_S`` in ``testing/stall_probe/sitecustomize.py``).
_PROBE_PERIOD_S = 0.002


def _run(tmp_path: Path, *args: str) -> tuple[Path, float]:
    """Runs the program with the probe: the probe's directory and the instant the
    program's loop was blocked."""
    stalls = tmp_path / "stalls"
    stalls.mkdir(exist_ok=True)
    program = tmp_path / "program.py"
    program.write_text(_PROGRAM)
    done = subprocess.run(
        [sys.executable, str(program), *args],
        env={**os.environ, **probe_env(stalls)},
        check=True,
        timeout=60,
        capture_output=True,
        text=True,
    )
    return stalls, float(done.stdout.split()[0])


def test_the_probe_notes_a_blocked_loop_and_a_long_collection_at_their_wall_clock_instants(
    tmp_path: Path,
) -> None:
    before = time.time()
    directory, blocked_at = _run(tmp_path, "--generator")  # named as a load generator
    stalls = read_stalls(directory)
    after = time.time()
    assert {s.process for s in stalls} == {"generator"}
    loops = sorted((s for s in stalls if s.kind == "loop"), key=lambda s: s.start_s)
    # the 30 ms sleep: one loop stall spans it (its lateness began at most one probe
    # period after the block began, and it ended after the block did)
    slack = 0.001  # two clocks: perf_counter for durations, time.time for instants
    began_by, ended_after = blocked_at + _PROBE_PERIOD_S + slack, blocked_at + 0.03 - slack
    spanning = [s for s in loops if s.start_s <= began_by and s.end_s >= ended_after]
    assert len(spanning) == 1, loops
    blocked = spanning[0]
    assert before < blocked.start_s < blocked.end_s < after
    assert 25 <= blocked.ms < 200
    # the long collection (and the list built for it) held the loop later: a loop stall
    # that contains it
    longest = max((s for s in stalls if s.kind == "gc"), key=lambda s: s.ms)
    assert longest.ms >= 5 and longest.start_s > blocked.end_s
    assert any(
        s.start_s - slack <= longest.start_s and longest.end_s <= s.end_s + slack
        for s in loops
        if s.start_s > blocked.end_s
    )


def test_a_process_that_is_neither_a_service_nor_a_generator_is_not_probed(
    tmp_path: Path,
) -> None:
    stalls, _ = _run(tmp_path)
    assert list(stalls.iterdir()) == []


def test_the_probe_path_goes_first_and_keeps_the_path_given(tmp_path: Path) -> None:
    env = probe_env(tmp_path)
    assert env["BENCH_STALLS_DIR"] == str(tmp_path)
    first, *rest = env["PYTHONPATH"].split(os.pathsep)
    assert (Path(first) / "sitecustomize.py").is_file()
    given = os.environ.get("PYTHONPATH", "")
    assert rest == (given.split(os.pathsep) if given else [])


def _stall(process: str, kind: str, start_s: float, ms: float) -> Stall:
    return Stall(process, kind, start_s, ms)


def test_each_slow_command_counts_the_collections_and_stalls_it_was_in_flight_during() -> None:
    stalls = [
        _stall("gateway", "gc", 100.010, 20.0),  # 100.010-100.030
        _stall("gateway", "loop", 100.008, 25.0),  # the same collection's stall
        _stall("table", "loop", 100.050, 5.0),  # 100.050-100.055
        _stall("generator", "loop", 100.200, 3.0),
        _stall("table", "loop", 99.0, 50.0),  # before the window
    ]
    slow = [
        (100.000, 20.0),  # 100.000-100.020: the gateway's collection
        (100.040, 20.0),  # 100.040-100.060: the table's stall
        (100.020, 40.0),  # both
        (100.100, 16.0),  # nothing
    ]
    figures = attribute(slow, stalls, 99.5, 101.0, 15.0)
    assert figures["slow_commands"] == 4
    # the gateway's loop stall is its collection: counted as "gateway gc" only
    assert figures["overlapping"] == {"gateway gc": 2, "table loop": 2}
    assert figures["none"] == 1
    # the window's stalls by process and kind (the one before it left out)
    assert figures["stalls"]["table loop"] == {"count": 1, "total_ms": 5.0, "max_ms": 5.0}
    assert figures["stalls"]["gateway gc"]["count"] == 1
    assert set(figures["stalls"]) == {"gateway gc", "gateway loop", "table loop", "generator loop"}
    line = describe(figures)
    assert line.startswith("4 over 15 ms, in flight during: ")
    assert "gateway gc 2" in line and "table loop 2" in line and line.endswith("nothing 1")


def test_a_step_without_slow_commands_says_so() -> None:
    figures = attribute([], [_stall("table", "gc", 1.0, 2.0)], 0.0, 2.0, 15.0)
    assert figures["slow_commands"] == 0 and figures["none"] == 0
    assert describe(figures) == "none over 15 ms"

"""The stall probe of ``bench.load --stalls DIR`` (:mod:`testing.stalls`), loaded by
Python itself at start-up (``site`` imports ``sitecustomize`` from the ``PYTHONPATH`` that
the bench puts this directory on) in the cluster's service processes and the generators,
so that no service carries bench code.

Active only when ``BENCH_STALLS_DIR`` is set and the process is a service (``python -m
services.<name>``) or a load generator (``--generator``); it then appends to
``<dir>/<name>-<pid>.txt`` one line per

- **collection** of the garbage collector that lasted at least :data:`MIN_GC_MS`:
  ``gc <generation> <wall-clock start, s> <ms>``;
- **loop stall**: a task sleeping :data:`PERIOD_S` at a time on the process's event loop
  (uvloop's or asyncio's, started by ``uvloop.run`` / ``asyncio.run``) woke at least
  :data:`MIN_STALL_MS` late: ``loop <wall-clock start of the lateness, s> <ms>``.

The wall clock (``time.time``) is what every process shares; the bench matches these lines
with the instants of its slow commands. Costs a wake-up every 2 ms per process.
"""

from __future__ import annotations

import asyncio
import gc
import os
import time
from collections.abc import Callable, Coroutine
from typing import Any, TextIO

import uvloop

ENV_VAR = "BENCH_STALLS_DIR"
PERIOD_S = 0.002
MIN_STALL_MS = 2.0
MIN_GC_MS = 1.0


def _name() -> str:
    """``gateway``, ``table``, ``timer``, ``generator``, or "" (not probed)."""
    with open("/proc/self/cmdline", "rb") as cmdline:
        argv = cmdline.read().decode(errors="replace").split("\0")
    for i, arg in enumerate(argv[:-1]):
        if arg == "-m" and argv[i + 1].startswith("services."):
            return argv[i + 1].rpartition(".")[2]
    return "generator" if "--generator" in argv else ""


def _watch_gc(out: TextIO) -> None:
    started: list[float] = [0.0, 0.0]

    def on_gc(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            started[:] = [time.perf_counter(), time.time()]
            return
        ms = (time.perf_counter() - started[0]) * 1e3
        if ms >= MIN_GC_MS:
            out.write(f"gc {info['generation']} {started[1]:.6f} {ms:.3f}\n")

    gc.callbacks.append(on_gc)


async def _watch_loop(out: TextIO) -> None:
    while True:
        due = time.perf_counter() + PERIOD_S
        await asyncio.sleep(PERIOD_S)
        late_ms = (time.perf_counter() - due) * 1e3
        if late_ms >= MIN_STALL_MS:
            out.write(f"loop {time.time() - late_ms / 1e3:.6f} {late_ms:.3f}\n")


def _probing(
    run: Callable[..., Any], out: TextIO
) -> Callable[..., Any]:  # uvloop.run / asyncio.run, with the loop watched
    def probed(main: Coroutine[Any, Any, Any], **options: Any) -> Any:
        async def watched() -> Any:
            watch = asyncio.ensure_future(_watch_loop(out))
            try:
                return await main
            finally:
                watch.cancel()

        return run(watched(), **options)

    return probed


def _install() -> None:
    directory, name = os.environ.get(ENV_VAR, ""), ""
    if directory:
        name = _name()
    if not name:
        return
    out = open(  # noqa: SIM115 - open for the life of the process, line by line
        os.path.join(directory, f"{name}-{os.getpid()}.txt"), "a", buffering=1
    )
    _watch_gc(out)
    asyncio.run = _probing(asyncio.run, out)
    uvloop.run = _probing(uvloop.run, out)


_install()

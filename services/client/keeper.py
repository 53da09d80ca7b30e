"""Keep one process running, as Kubernetes keeps a pod's container running: ``make run-ha``
runs every process of its map (``Procfile.ha``) under a keeper, so that one replica dying
does not stop the others (honcho stops everything when one of *its* processes ends).

``python -m services.client.keeper [--name NAME] [--pidfile PATH] [--delay S] -- CMD [ARG...]``

- Starts ``CMD`` (no shell) with the keeper's environment, stdout and stderr, in the
  keeper's process group.
- When ``CMD`` ends by itself, whatever the reason (an exit status, a crash, ``kill -9``),
  waits ``--delay`` seconds (default 1) and starts it again, then writes one line on stderr:
  ``keeper NAME: pid 123 was killed by SIGKILL after 8.2 s; started it again as pid 456
  (restart 1)``. There is no back-off: a command that cannot start is retried every
  ``--delay`` seconds, one line each time.
- On SIGTERM or SIGINT it forwards that signal to ``CMD``, waits for ``CMD`` to end, does
  not restart it, and exits with ``CMD``'s status (``128 + N`` when signal ``N`` ended it); a
  signal during the delay ends the keeper at once. SIGKILL cannot be forwarded: honcho
  signals the whole process group (the keeper and ``CMD`` alike), and 5 s after its SIGTERM
  SIGKILLs that group, so a stopped cluster leaves no process behind.
- ``--pidfile PATH``: ``CMD``'s current pid, rewritten (atomically) at every start and
  removed when the keeper ends, so ``kill -9 $(cat PATH)`` kills whatever process that
  replica runs now (under ``make run-ha``: ``$DOMINOS_RUN_DIR/pids/<name>.pid``).
- A command that cannot be executed at all (not found, not executable) is not retried: the
  keeper says so and exits with status 127.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from types import FrameType
from typing import Final, TextIO

__all__ = ["DEFAULT_DELAY_S", "Keeper", "describe_end", "main", "parser"]

DEFAULT_DELAY_S: Final = 1.0
"""How long a keeper waits before starting its command again (seconds)."""

#: The signals a keeper forwards to its command and then stops on.
STOP_SIGNALS: Final = (signal.SIGTERM, signal.SIGINT)

#: How often the delay before a restart looks whether a stop signal came (seconds).
_PAUSE_STEP_S: Final = 0.05


def describe_end(returncode: int) -> str:
    """How a process ended, in words: ``"exited with status 3"``, ``"was killed by SIGKILL"``
    (``returncode`` as :class:`subprocess.Popen` gives it: negative for a signal)."""
    if returncode >= 0:
        return f"exited with status {returncode}"
    try:
        name = signal.Signals(-returncode).name
    except ValueError:
        name = f"signal {-returncode}"
    return f"was killed by {name}"


def exit_status(returncode: int) -> int:
    """The shell's exit status of a process that ended with ``returncode``."""
    return returncode if returncode >= 0 else 128 - returncode


class Keeper:
    """Runs ``command`` again ``delay`` seconds after each end until a stop signal (see the
    module's docstring); :meth:`run` returns the exit status."""

    def __init__(
        self,
        command: Sequence[str],
        *,
        name: str = "",
        delay: float = DEFAULT_DELAY_S,
        pidfile: Path | None = None,
        log: TextIO | None = None,
    ) -> None:
        if not command:
            raise ValueError("no command to keep")
        self.command = list(command)
        self.name = name or Path(command[0]).name
        self.delay = delay
        self.pidfile = pidfile
        self.log = log if log is not None else sys.stderr
        #: The signal that stops the keeper, once one came.
        self.stopping: int | None = None
        #: How many times the command was started again.
        self.restarts = 0
        self._child: subprocess.Popen[bytes] | None = None

    def say(self, text: str) -> None:
        """One line on the keeper's log, prefixed by its name."""
        print(f"keeper {self.name}: {text}", file=self.log, flush=True)

    def _on_signal(self, signum: int, _frame: FrameType | None) -> None:
        self.stopping = signum
        child = self._child
        if child is not None:
            # send_signal does nothing once the child was reaped (no stray pid is signalled).
            child.send_signal(signum)

    def _spawn(self) -> subprocess.Popen[bytes]:
        child = subprocess.Popen(self.command)  # raises OSError when it cannot be executed
        self._child = child
        if self.stopping is not None:  # the signal came while the child was being created
            child.send_signal(self.stopping)
        self._write_pidfile(child.pid)
        return child

    def _write_pidfile(self, pid: int) -> None:
        if self.pidfile is None:
            return
        self.pidfile.parent.mkdir(parents=True, exist_ok=True)
        partial = self.pidfile.with_name(self.pidfile.name + ".partial")
        partial.write_text(f"{pid}\n")
        os.replace(partial, self.pidfile)

    def _pause(self) -> bool:
        """Wait ``delay`` seconds; False as soon as a stop signal came."""
        deadline = time.monotonic() + self.delay
        while self.stopping is None:
            left = deadline - time.monotonic()
            if left <= 0:
                return True
            time.sleep(min(left, _PAUSE_STEP_S))
        return False

    def run(self) -> int:
        """Keep the command running until SIGTERM or SIGINT; returns the exit status (the
        command's last status, or 127 when it cannot be executed)."""
        previous = {sig: signal.signal(sig, self._on_signal) for sig in STOP_SIGNALS}
        try:
            return self._keep()
        except OSError as error:
            self.say(f"cannot run {self.command[0]}: {error.strerror or error}; giving up")
            return 127
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            if self.pidfile is not None:
                with contextlib.suppress(OSError):
                    self.pidfile.unlink(missing_ok=True)

    def _keep(self) -> int:
        child = self._spawn()
        while True:
            started = time.monotonic()
            returncode = child.wait()
            if self.stopping is not None:
                return exit_status(returncode)
            lived = time.monotonic() - started
            if not self._pause():
                return exit_status(returncode)
            dead = child.pid
            child = self._spawn()
            self.restarts += 1
            self.say(
                f"pid {dead} {describe_end(returncode)} after {lived:.1f} s; "
                f"started it again as pid {child.pid} (restart {self.restarts})"
            )


def parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m services.client.keeper``."""
    root = argparse.ArgumentParser(
        prog="python -m services.client.keeper",
        description="Run a command, and run it again whenever it ends, until SIGTERM/SIGINT.",
    )
    root.add_argument("--name", default="", help="the name in the keeper's log lines")
    root.add_argument(
        "--delay",
        type=float,
        default=DEFAULT_DELAY_S,
        help=f"seconds before a restart (default {DEFAULT_DELAY_S:g})",
    )
    root.add_argument("--pidfile", type=Path, help="keep the command's current pid in this file")
    root.add_argument("command", nargs=argparse.REMAINDER, help="-- CMD [ARG...]")
    return root


def main(argv: Sequence[str] | None = None) -> int:
    """Run a keeper with ``argv`` (default: the process arguments); returns the exit status."""
    root = parser()
    args = root.parse_args(argv)
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        root.error("no command: python -m services.client.keeper [options] -- CMD [ARG...]")
    if args.delay < 0:
        root.error("--delay must not be negative")
    keeper = Keeper(command, name=args.name, delay=args.delay, pidfile=args.pidfile)
    return keeper.run()


if __name__ == "__main__":
    sys.exit(main())

"""How gRPC's core does its socket I/O in our processes; must run before ``import grpc``.

gRPC Python (1.85) reads and writes sockets on EventEngine worker threads by default: a
message crosses from a worker thread to the completion-queue poller thread to the event
loop, three threads and their wake-ups per event. With the ``event_engine_listener`` and
``event_engine_client`` experiments turned off, the poller thread does the I/O itself. The
load bench measured (issue 22, 250 tables, two pairs, the floor pipeline beside the
cluster with the same setting): the cluster's CPU per command 5.23/5.28 → 4.85/4.32 s per
1,000 commands, action → four views p99 80.7/18.5 → 14.5/10.0 ms; a bare unary call costs
the server ~10-20 % less CPU.

gRPC core reads ``GRPC_EXPERIMENTS`` once, when the ``grpc`` module is first imported, so
:func:`use_poller_io` is the first statement of every process entry point
(``services/*/__main__.py``, ``bench/load/__main__.py``). An operator's own
``GRPC_EXPERIMENTS`` is kept as given (an empty value restores gRPC's default).
``tests/integration/common/test_grpc_io.py`` proves the setting still takes effect with the
installed ``grpcio``: a release that drops these experiments fails it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import MutableMapping
from typing import Final

#: gRPC core experiments turned off in every service process (see the module docstring).
POLLER_IO_EXPERIMENTS: Final = "-event_engine_listener,-event_engine_client"


def use_poller_io(environ: MutableMapping[str, str] | None = None) -> bool:
    """Set ``GRPC_EXPERIMENTS`` to :data:`POLLER_IO_EXPERIMENTS` unless the environment
    (default: this process's) has it already. Returns whether this process's gRPC will run
    with it: False when ``grpc`` was imported before (child processes still inherit it) or
    the variable was set otherwise."""
    env = os.environ if environ is None else environ
    if "GRPC_EXPERIMENTS" in env:
        return False
    env["GRPC_EXPERIMENTS"] = POLLER_IO_EXPERIMENTS
    return "grpc" not in sys.modules

"""A TCP fault proxy for chaos tests: forwards one listening port to one target, with faults.

The proxy runs its own event loop in a daemon thread, so it keeps forwarding (or keeps
misbehaving) whatever the test's own loop or thread is doing; every control method is
thread-safe and returns once the change is in force.

Faults:

- **latency** (``set_latency(seconds)``): every chunk is delivered ``seconds`` after it was
  read, order preserved, in both directions.
- **stall** (``stall()``): nothing is forwarded; what arrives is buffered and delivered on
  ``heal()`` (a partition healed before TCP gives up: retransmissions deliver everything).
- **blackhole** (``blackhole()``): every open connection becomes *dead*: what it carries is
  read and dropped, for ever, and it is never closed (a peer that vanished without a FIN or
  RST: host crash, lost NAT/conntrack state). While the blackhole lasts, new connections
  are accepted and dead too. ``heal()`` only lets *new* connections through; the dead ones
  stay dead until an endpoint closes them (a keepalive, a timeout).
- **reset** (``reset()``): every open connection is closed at once on both sides with an
  RST (``SO_LINGER`` 0).

``heal()`` ends stall and blackhole (not latency: ``set_latency(0)``).
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T")

_CHUNK = 65536


@dataclass(eq=False)
class _Link:
    """One proxied connection: the client side and the target side."""

    client: asyncio.StreamWriter
    upstream: asyncio.StreamWriter | None = None
    dead: bool = False
    tasks: list[asyncio.Task[None]] = field(default_factory=list)


class FaultProxy:
    """``127.0.0.1:<port>`` → ``target_host:target_port`` with injectable faults."""

    def __init__(self, target_host: str, target_port: int, *, name: str = "proxy") -> None:
        self.target = (target_host, target_port)
        self.name = name
        self.port = 0
        self.accepted = 0
        self._latency = 0.0
        self._flowing: asyncio.Event | None = None
        self._blackholed = False
        self._links: set[_Link] = set()
        self._server: asyncio.Server | None = None
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, name=name, daemon=True)

    # -- lifecycle --------------------------------------------------------------------

    def start(self) -> FaultProxy:
        """Listen on a free port and forward; returns once listening."""
        self._thread.start()
        self._call(self._start())
        return self

    async def _start(self) -> None:
        self._flowing = asyncio.Event()
        self._flowing.set()
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])

    @property
    def address(self) -> str:
        """``127.0.0.1:<port>``: where clients connect."""
        return f"127.0.0.1:{self.port}"

    def close(self) -> None:
        """Stop listening, close every connection, stop the thread."""
        if not self._thread.is_alive():
            return
        self._call(self._close())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=5)
        if not self._thread.is_alive():
            self._loop.close()

    async def _close(self) -> None:
        if self._server is not None:
            self._server.close()
        for link in list(self._links):
            self._abort(link)
        tasks = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)

    def _call(self, coro: Coroutine[Any, Any, T], timeout: float = 10.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(timeout)

    # -- faults -----------------------------------------------------------------------

    def set_latency(self, seconds: float) -> None:
        """Delay every chunk by ``seconds`` (0: none)."""
        self._latency = max(seconds, 0.0)

    def stall(self) -> None:
        """Stop forwarding; buffer what arrives until :meth:`heal`."""
        self._call(self._set_flowing(False))

    def blackhole(self) -> None:
        """Make every open (and, until :meth:`heal`, every new) connection dead."""
        self._call(self._blackhole())

    def reset(self) -> int:
        """Close every open connection with an RST on both sides; returns how many."""
        return self._call(self._reset())

    def heal(self) -> None:
        """Forward again: buffered data flows, new connections pass (dead ones stay dead)."""
        self._call(self._heal())

    @property
    def connections(self) -> int:
        """Open connections (dead ones included)."""
        return len(self._links)

    async def _set_flowing(self, flowing: bool) -> None:
        assert self._flowing is not None
        if flowing:
            self._flowing.set()
        else:
            self._flowing.clear()

    async def _blackhole(self) -> None:
        self._blackholed = True
        for link in self._links:
            link.dead = True

    async def _heal(self) -> None:
        self._blackholed = False
        await self._set_flowing(True)

    async def _reset(self) -> int:
        links = list(self._links)
        for link in links:
            self._abort(link)
        return len(links)

    # -- forwarding -------------------------------------------------------------------

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.accepted += 1
        link = _Link(writer, dead=self._blackholed)
        self._links.add(link)
        try:
            if link.dead:
                await self._drain_dead(reader)
                return
            try:
                up_reader, up_writer = await asyncio.open_connection(*self.target)
            except OSError:
                self._abort(link)
                return
            link.upstream = up_writer
            if link.dead:  # blackholed while connecting
                up_writer.close()
                link.upstream = None
                await self._drain_dead(reader)
                return
            link.tasks = [
                asyncio.create_task(self._pump(link, reader, up_writer)),
                asyncio.create_task(self._pump(link, up_reader, writer)),
            ]
            await asyncio.gather(*link.tasks, return_exceptions=True)
        finally:
            self._abort(link)

    async def _drain_dead(self, reader: asyncio.StreamReader) -> None:
        """Read and drop until the peer closes."""
        with contextlib.suppress(OSError):
            while await reader.read(_CHUNK):
                pass

    async def _pump(
        self, link: _Link, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        """Copy one direction, applying the faults; closing either side ends the link."""
        assert self._flowing is not None
        queue: deque[tuple[float, bytes]] = deque()
        ready = asyncio.Event()
        ended = False

        async def deliver() -> None:
            assert self._flowing is not None
            while True:
                while not queue:
                    if ended:
                        return
                    ready.clear()
                    await ready.wait()
                due, data = queue[0]
                wait = due - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                await self._flowing.wait()
                queue.popleft()
                if link.dead:
                    continue
                writer.write(data)
                await writer.drain()

        sender = asyncio.create_task(deliver())
        sender.add_done_callback(
            lambda task: None if task.cancelled() or not task.exception() else self._abort(link)
        )
        try:
            while True:
                data = await reader.read(_CHUNK)
                if not data:
                    break
                if link.dead:
                    continue
                queue.append((time.monotonic() + self._latency, data))
                ready.set()
            ended = True
            ready.set()
            if not link.dead:
                await sender
        except (OSError, asyncio.CancelledError):
            pass
        finally:
            sender.cancel()
            if link.dead:
                # A dead connection is never closed by the proxy: wait until the peer does.
                with contextlib.suppress(OSError, asyncio.CancelledError):
                    while await reader.read(_CHUNK):
                        pass
            else:
                self._abort(link)

    def _abort(self, link: _Link) -> None:
        """Close both sides with an RST."""
        if link not in self._links:
            return
        self._links.discard(link)
        for writer in (link.client, link.upstream):
            if writer is None:
                continue
            sock = writer.get_extra_info("socket")
            if sock is not None:
                with contextlib.suppress(OSError):
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            with contextlib.suppress(Exception):
                writer.transport.abort()
        for task in link.tasks:
            task.cancel()

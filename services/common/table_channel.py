"""The channel to the table service (gateway, bots service): every unary call carries the
caller's credential and its table, and is timed — without gRPC's client interceptors.

An ``grpc.aio`` client interceptor turns each call into an intercepted call that runs the
chain in a task of its own, with futures between the links: on the gateway, whose every
command is one such call, the two interceptors this channel had (credential + table header,
timing) were the largest single item of its own CPU (issue 22). Here the generated stubs are
built on :class:`TableChannel`, whose ``unary_unary`` returns a :class:`TableCall`: one
coroutine that adds the metadata, awaits the call and records its time.

- metadata: ``dominos-caller`` (the credential, when the process has one:
  :mod:`services.common.caller_auth`) and ``dominos-table`` (the call's table, for
  table-affine routing: :mod:`services.common.table_routing`);
- timing: ``dominos_grpc_client_handling_seconds{grpc_service, grpc_method, grpc_code}``,
  one observation per call (a retry is a new call).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

import grpc

from services.common.caller_auth import METADATA_KEY
from services.common.grpc_metrics import ClientTimer, split_method
from services.common.table_routing import TABLE_HEADER, table_of

__all__ = ["TableCall", "TableChannel"]

_perf = time.perf_counter


class TableCall:
    """A unary method of the table channel: ``await call(request, timeout=...)`` returns the
    reply or raises the call's ``grpc.aio.AioRpcError``, like the multicallable it wraps,
    with the credential and the table in its metadata, timed by status code."""

    __slots__ = ("_call", "_credential", "_timer", "name")

    def __init__(self, call: Any, method: str, credential: tuple[tuple[str, str], ...]) -> None:
        self._call = call
        self._credential = credential
        service, self.name = split_method(method)
        self._timer = ClientTimer(service, self.name)

    async def __call__(
        self,
        request: Any,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 (grpc's per-call deadline)
        metadata: tuple[tuple[str, str], ...] | None = None,
        **options: Any,
    ) -> Any:
        """The reply of the call; its metadata is ``metadata``, the table's header and the
        credential."""
        table_id = table_of(request)
        sent = (*(metadata or ()), *self._credential)
        if table_id:
            sent = ((TABLE_HEADER, table_id), *sent)
        started = _perf()
        code = "UNKNOWN"
        try:
            reply = await self._call(request, timeout=timeout, metadata=sent or None, **options)
            code = "OK"
            return reply
        except grpc.aio.AioRpcError as error:
            code = error.code().name
            raise
        except asyncio.CancelledError:
            code = "CANCELLED"
            raise
        finally:
            self._timer.observe(code, _perf() - started)


class TableChannel:
    """A ``grpc.aio`` channel whose unary methods are :class:`TableCall`\\ s; generated stubs
    take it as a channel. Closing it closes the channel."""

    def __init__(self, channel: grpc.aio.Channel, credential: str = "") -> None:
        self.channel = channel
        self._credential: tuple[tuple[str, str], ...] = (
            ((METADATA_KEY, credential),) if credential else ()
        )

    def unary_unary(self, method: str, *args: Any, **kwargs: Any) -> TableCall:
        """The stub's unary method ``method`` (``/package.Service/Method``)."""
        call = self.channel.unary_unary(method, *args, **kwargs)
        return TableCall(call, method, self._credential)

    def unary_stream(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """A server-streaming method, as the channel gives it (none in the contract today)."""
        return self.channel.unary_stream(method, *args, **kwargs)

    def stream_unary(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """A client-streaming method, as the channel gives it (none in the contract)."""
        return self.channel.stream_unary(method, *args, **kwargs)

    def stream_stream(self, method: str, *args: Any, **kwargs: Any) -> Any:
        """A bidirectional method, as the channel gives it (none in the contract)."""
        return self.channel.stream_stream(method, *args, **kwargs)

    def get_state(self, try_to_connect: bool = False) -> grpc.ChannelConnectivity:
        """The channel's connectivity."""
        return self.channel.get_state(try_to_connect)

    async def channel_ready(self) -> None:
        """Wait until the channel is ready."""
        await self.channel.channel_ready()

    async def close(self, grace: float | None = None) -> None:
        """Close the channel (calls in flight are cancelled after ``grace``)."""
        await self.channel.close(grace)

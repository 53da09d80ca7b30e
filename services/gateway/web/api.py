"""``dominos.v1.DominosService`` for the web edge: every method of the contract, each the
gateway servicer's own method behind a :class:`~services.gateway.web.calls.WebCall`.

Nothing here decides anything: the servicer validates, counts, forwards and logs exactly as
for a gRPC client; each call is counted and timed in the same RPC metrics
(``dominos_grpc_server_*``, the same service and method labels) and, by protocol, in
``dominos_gateway_web_calls_total``.
"""

from __future__ import annotations

import asyncio
import keyword
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, Final

from connectrpc.code import Code
from connectrpc.errors import ConnectError
from connectrpc.request import RequestContext
from dominos.v1 import gateway_pb2

from services.common.grpc_metrics import timed
from services.common.logging import get_logger
from services.gateway import metrics
from services.gateway.web.calls import WebCall

__all__ = ["WebApi", "protocol_of", "python_name"]

SERVICE: Final = gateway_pb2.DESCRIPTOR.services_by_name["DominosService"]

log = get_logger(__name__)

_Unary = Callable[[Any, RequestContext[Any, Any]], Awaitable[Any]]
_Streaming = Callable[[Any, RequestContext[Any, Any]], AsyncIterator[Any]]


def python_name(rpc: str) -> str:
    """The method name the Connect stubs give an RPC: ``GetTableView`` → ``get_table_view``,
    ``Pass`` → ``pass_``."""
    name = re.sub(r"(?<!^)(?=[A-Z])", "_", rpc).lower()
    return f"{name}_" if keyword.iskeyword(name) else name


def protocol_of(context: RequestContext[Any, Any]) -> str:
    """``grpc_web`` or ``connect``, from the request's content type."""
    content_type = context.request_headers().get("content-type", "")
    return "grpc_web" if content_type.startswith("application/grpc-web") else "connect"


def _internal(rpc: str, error: Exception) -> ConnectError:
    """A failure of the gateway's own code: logged, answered INTERNAL without its text."""
    log.error("web.call_failed", rpc=rpc, error=repr(error), exc_info=error)
    return ConnectError(Code.INTERNAL, "internal error")


class WebApi:
    """The contract's methods (Connect stub names) over ``servicer``'s gRPC methods."""

    def __init__(self, servicer: Any) -> None:
        for method in SERVICE.methods:
            behaviour = timed(
                getattr(servicer, method.name),
                SERVICE.full_name,
                method.name,
                streaming=method.server_streaming,
            )
            adapter = (
                self._streaming(method.name, behaviour)
                if method.server_streaming
                else self._unary(method.name, behaviour)
            )
            setattr(self, python_name(method.name), adapter)

    @staticmethod
    def _unary(rpc: str, behaviour: Any) -> _Unary:
        async def call(request: Any, context: RequestContext[Any, Any]) -> Any:
            metrics.WEB_CALLS.labels(protocol_of(context), rpc).inc()
            web_call = WebCall(context)
            try:
                return await behaviour(request, web_call)
            except ConnectError:
                raise
            except Exception as error:
                raise _internal(rpc, error) from None
            finally:
                web_call.finish()

        return call

    @staticmethod
    def _streaming(rpc: str, behaviour: Any) -> _Streaming:
        async def stream(request: Any, context: RequestContext[Any, Any]) -> AsyncIterator[Any]:
            metrics.WEB_CALLS.labels(protocol_of(context), rpc).inc()
            web_call = WebCall(context, stream=True)
            producer = asyncio.create_task(behaviour(request, web_call))
            try:
                async for message in web_call.messages(producer):
                    yield message
            except ConnectError:
                raise
            except Exception as error:
                raise _internal(rpc, error) from None
            finally:
                # The client went away or the stream ended: the servicer's own cleanup
                # (presence, caps, the hub) runs as for a gRPC stream.
                web_call.finish()
                if not producer.done():
                    producer.cancel()
                await asyncio.gather(producer, return_exceptions=True)

        return stream

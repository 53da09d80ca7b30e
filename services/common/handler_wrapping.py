"""Method handlers wrapped once, when a servicer registers them, instead of server interceptors.

A ``grpc.aio`` server given interceptors runs them on every call, before it finds the
method's handler: a coroutine and a handler lookup per interceptor and call (about 10 µs
of CPU each, measured with grpcio 1.85 on a bare server; issue 22). Every service needs the
same two things on every call — counting and timing it, and checking who calls the table
service — and both depend only on the method, which is known when the handlers are
registered. So each is a :data:`HandlerWrapper`, applied once per method by
:class:`WrappingRegistrar`, which servicers (and health, and reflection) register through
instead of the server itself; a call then runs its wrapped handler directly.

The first wrapper given is the outermost: it sees the call before the others and its
outcome after them (the metrics wrapper, first, counts a call another wrapper refused
with the status it was refused with).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import grpc

__all__ = ["HandlerWrapper", "WrappingRegistrar", "serialized_answers"]

HandlerWrapper = Callable[[str, Any], Any]
"""``(full method name "/package.Service/Method", handler) -> handler``: the handler to
serve the method with (the same one when the wrapper has nothing to add to it)."""

#: Wrapped handlers a generic handler keeps (methods x the handlers it answers with); beyond,
#: a handler is wrapped for its call only.
_WRAPPED_KEPT = 256


class WrappingRegistrar:
    """Stands for a ``grpc.aio.Server`` while servicers register: every method handler they
    add is wrapped by ``wrappers`` (first outermost) once; anything else goes to the server."""

    def __init__(self, server: Any, wrappers: Sequence[HandlerWrapper]) -> None:
        self._server = server
        self._wrappers = tuple(wrappers)

    def wrap(self, method: str, handler: Any) -> Any:
        """``handler`` of ``method`` wrapped by every wrapper, the first outermost."""
        for wrapper in reversed(self._wrappers):
            handler = wrapper(method, handler)
        return handler

    def add_registered_method_handlers(self, service: str, handlers: dict[str, Any]) -> None:
        """Register ``service``'s handlers (by method name), wrapped."""
        self._server.add_registered_method_handlers(
            service,
            {name: self.wrap(f"/{service}/{name}", handler) for name, handler in handlers.items()},
        )

    def add_generic_rpc_handlers(self, handlers: Sequence[Any]) -> None:
        """Register generic handlers whose handlers are wrapped the first time they answer."""
        self._server.add_generic_rpc_handlers(
            tuple(_WrappedGenericHandler(handler, self.wrap) for handler in handlers)
        )

    def __getattr__(self, name: str) -> Any:
        return getattr(self._server, name)


class _WrappedGenericHandler(grpc.GenericRpcHandler):  # type: ignore[misc]
    """A generic handler (a lookup per call, used by methods with no registered handler:
    reflection) whose answers are wrapped once each."""

    def __init__(self, inner: Any, wrap: Callable[[str, Any], Any]) -> None:
        self._inner = inner
        self._wrap = wrap
        #: (method, id of the handler) → (the handler, kept alive; its wrapped handler).
        self._wrapped: dict[tuple[str, int], tuple[Any, Any]] = {}

    def service(self, handler_call_details: Any) -> Any:
        """The inner handler's answer for the call's method, wrapped (``None``: not ours)."""
        handler = self._inner.service(handler_call_details)
        if handler is None:
            return None
        method = handler_call_details.method or ""
        key = (method, id(handler))
        kept = self._wrapped.get(key)
        if kept is not None and kept[0] is handler:
            return kept[1]
        wrapped = self._wrap(method, handler)
        if len(self._wrapped) < _WRAPPED_KEPT:
            self._wrapped[key] = (handler, wrapped)
        return wrapped


def serialized_answers(*methods: str) -> HandlerWrapper:
    """A wrapper letting the handlers of ``methods`` answer ``bytes`` already serialised,
    sent as they are (issue 22: a response joined from serialised parts need not be parsed
    into a message to be serialised again); any other answer goes through the method's own
    serializer, as before."""

    def wrap(method: str, handler: Any) -> Any:
        if method not in methods:
            return handler
        serialize = handler.response_serializer

        def serializer(answer: Any) -> bytes:
            return answer if answer.__class__ is bytes else serialize(answer)

        return handler._replace(response_serializer=serializer)

    return wrap

"""Service-to-service credentials on internal gRPC calls (the gateway → the table service).

A caller presents ``<caller>.<secret>`` in the ``dominos-caller`` metadata of every call
(:class:`CallerCredentials`, a client interceptor). The server (:class:`CallerAuth`, wrapping
each protected method's handler) compares it in constant time with the credentials it accepts
(``DOMINOS_TABLE_CALLERS``: several at once during a rotation) and refuses any other call of
the protected services with ``UNAUTHENTICATED`` — without an ``ErrorInfo``, so a gateway with
a wrong credential answers its clients ``UNAVAILABLE`` and logs the failure instead of
relaying an internal reason. Health and reflection stay open (probes, tools). The caller's
name is available to the servicer (:func:`current_caller`): only a caller named ``gateway``
may pass on a client's address.

Grants (issue 20) narrow what an authenticated caller may call: with ``grants``, a caller
named there may call only the services listed for it, and every other caller only
``default_grant`` (the table service grants ``bots`` its ``RobotService`` and nothing else,
and nobody else that service). A call outside its grant is refused ``PERMISSION_DENIED``.
"""

from __future__ import annotations

import contextvars
import hmac
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Final

import grpc

METADATA_KEY: Final = "dominos-caller"
#: The caller allowed to speak for clients (their address, for the join limit).
GATEWAY: Final = "gateway"
#: The bots service: it may call the robots' door of the table service only (issue 20).
BOTS: Final = "bots"

_caller: contextvars.ContextVar[str] = contextvars.ContextVar("dominos_caller", default="")


def current_caller() -> str:
    """The authenticated caller of the call being served ('' when none was required)."""
    return _caller.get()


def parse_credentials(text: str) -> dict[str, list[bytes]]:
    """``"gateway.s1,gateway.s2,admin.s3"`` → the accepted secrets per caller name."""
    accepted: dict[str, list[bytes]] = {}
    for credential in filter(None, (c.strip() for c in text.split(","))):
        name, _, secret = credential.partition(".")
        accepted.setdefault(name, []).append(secret.encode())
    return accepted


class CallerAuth:
    """Refuses calls of ``protected`` services without an accepted caller credential, and
    (with ``grants``) calls of a service outside the caller's grant: a
    :data:`~services.common.handler_wrapping.HandlerWrapper`, wrapping each protected
    method's handler once when it is registered (no interceptor runs per call)."""

    def __init__(
        self,
        accepted: dict[str, list[bytes]],
        protected: Iterable[str],
        *,
        grants: Mapping[str, frozenset[str]] | None = None,
        default_grant: frozenset[str] = frozenset(),
    ) -> None:
        self.accepted = accepted
        self.prefixes = tuple(f"/{service}/" for service in protected)
        self.grants = grants
        self.default_grant = default_grant

    def granted(self, caller: str, method: str) -> bool:
        """Whether ``caller`` may call ``method`` (``/package.Service/Method``)."""
        if self.grants is None:
            return True
        service = method.split("/")[1] if method.count("/") >= 2 else ""
        return service in self.grants.get(caller, self.default_grant)

    def caller_of(self, metadata: Iterable[tuple[str, Any]] | None) -> str | None:
        """The name of the caller whose credential is in ``metadata``; None when none is."""
        for key, value in metadata or ():
            if key != METADATA_KEY:
                continue
            text = value if isinstance(value, str) else bytes(value).decode(errors="replace")
            name, _, secret = text.partition(".")
            presented = secret.encode()
            matched = False
            for candidate in self.accepted.get(name, ()):
                matched |= hmac.compare_digest(candidate, presented)
            return name if matched else None
        return None

    async def _admit(self, method: str, context: Any) -> None:
        """Refuse the call (``context.abort`` raises) unless its caller is authenticated and
        within its grant; sets the caller for the servicer (:func:`current_caller`)."""
        caller = self.caller_of(context.invocation_metadata())
        if caller is None:
            await context.abort(
                grpc.StatusCode.UNAUTHENTICATED,
                "a service credential is required (dominos-caller)",
            )
        elif not self.granted(caller, method):
            await context.abort(
                grpc.StatusCode.PERMISSION_DENIED, "this caller may not call this service"
            )
        else:
            _caller.set(caller)

    def __call__(self, method: str, handler: Any) -> Any:
        """``handler`` of ``method`` served only to an authenticated caller within its grant
        (the caller set in the call's context for the servicer, :func:`current_caller`);
        the handler of an unprotected method as it is. A unary request is parsed only once
        the caller is accepted (an unauthenticated call is refused whatever its bytes); a
        bidirectional stream is checked when it opens, before its first message is read."""
        if not method.startswith(self.prefixes):
            return handler
        if handler.stream_stream is not None:
            streamed = handler.stream_stream

            async def checked_stream(requests: Any, context: Any) -> Any:
                await self._admit(method, context)
                return await streamed(requests, context)

            return grpc.stream_stream_rpc_method_handler(
                checked_stream,
                request_deserializer=handler.request_deserializer,
                response_serializer=handler.response_serializer,
            )
        if handler.unary_unary is None:
            raise ValueError(f"{method}: only unary and bidirectional methods can be protected")
        behavior, parse = handler.unary_unary, handler.request_deserializer

        async def checked(raw: bytes, context: Any) -> Any:
            await self._admit(method, context)
            return await behavior(raw if parse is None else parse(raw), context)

        return grpc.unary_unary_rpc_method_handler(
            checked, request_deserializer=None, response_serializer=handler.response_serializer
        )


class CallerCredentials(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    """Adds the caller's credential to every unary call of a channel."""

    def __init__(self, credential: str) -> None:
        self.metadata: tuple[tuple[str, str], ...] = ((METADATA_KEY, credential),)

    async def intercept_unary_unary(
        self, continuation: Callable[..., Any], client_call_details: Any, request: Any
    ) -> Any:
        """Call with the credential added to the metadata."""
        details = client_call_details._replace(
            metadata=(*(client_call_details.metadata or ()), *self.metadata)
        )
        return await continuation(details, request)

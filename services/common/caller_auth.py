"""Service-to-service credentials on internal gRPC calls (the gateway → the table service).

A caller presents ``<caller>.<secret>`` in the ``dominos-caller`` metadata of every call
(:class:`CallerCredentials`, a client interceptor). The server
(:class:`CallerAuthInterceptor`) compares it in constant time with the credentials it accepts
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
from collections.abc import Awaitable, Callable, Iterable, Mapping
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


class CallerAuthInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Refuses calls of ``protected`` services without an accepted caller credential, and
    (with ``grants``) calls of a service outside the caller's grant."""

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

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[grpc.RpcMethodHandler]],
        handler_call_details: grpc.HandlerCallDetails,
    ) -> grpc.RpcMethodHandler:
        """Serve the call as the authenticated caller, or refuse it. The caller is set in the
        call's context here: gRPC runs the interceptors and then the handler in one task per
        call, so the handler reads it (:func:`current_caller`) without a wrapper per call."""
        method = handler_call_details.method or ""
        if not method.startswith(self.prefixes):
            return await continuation(handler_call_details)
        caller = self.caller_of(handler_call_details.invocation_metadata)
        if caller is None:
            return _REFUSE
        if not self.granted(caller, method):
            return _REFUSE_OUTSIDE_GRANT
        _caller.set(caller)
        return await continuation(handler_call_details)


async def _refuse_outside_grant(request: Any, context: Any) -> None:
    await context.abort(grpc.StatusCode.PERMISSION_DENIED, "this caller may not call this service")


async def _refuse(request: Any, context: Any) -> None:
    await context.abort(
        grpc.StatusCode.UNAUTHENTICATED, "a service credential is required (dominos-caller)"
    )


_REFUSE: Final = grpc.unary_unary_rpc_method_handler(_refuse)
_REFUSE_OUTSIDE_GRANT: Final = grpc.unary_unary_rpc_method_handler(_refuse_outside_grant)


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

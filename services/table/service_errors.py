"""Errors of the services as gRPC statuses with the rich error model (``google.rpc.Status``).

A :class:`ServiceError` carries a gRPC status code, the machine-readable reason of the
contract (``ErrorReason`` without its prefix) and a message. :func:`abort` ends an RPC with
it: the status code and message as usual, plus the ``grpc-status-details-bin`` trailer
holding a ``google.rpc.Status`` with a ``google.rpc.ErrorInfo`` (domain ``dominos.v1``) and,
for rate limits, a ``google.rpc.RetryInfo`` and the limit that was reached in the
``ErrorInfo``'s metadata (``limit``, see :func:`rate_limited`). :func:`reason_of` reads the
reason back on the client side.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NoReturn

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2

from services.table.rules import ErrorKind, RuleError

DOMAIN = "dominos.v1"
DETAILS_KEY = "grpc-status-details-bin"

_KIND_CODES = {
    ErrorKind.INVALID_ARGUMENT: grpc.StatusCode.INVALID_ARGUMENT,
    ErrorKind.PERMISSION_DENIED: grpc.StatusCode.PERMISSION_DENIED,
    ErrorKind.FAILED_PRECONDITION: grpc.StatusCode.FAILED_PRECONDITION,
}


class ServiceError(Exception):
    """A request refused with a gRPC status code and a contract reason; it changed nothing."""

    def __init__(
        self,
        code: grpc.StatusCode,
        reason: str,
        message: str,
        *,
        retry_after_s: float | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> None:
        super().__init__(f"{code.name} {reason}: {message}")
        self.code = code
        self.reason = reason
        self.message = message
        self.retry_after_s = retry_after_s
        #: ``ErrorInfo.metadata``: machine-readable particulars (e.g. which limit).
        self.metadata = dict(metadata or {})

    @classmethod
    def from_rule(cls, error: RuleError) -> ServiceError:
        """The status of an engine rejection: its kind gives the code, its reason the reason."""
        return cls(_KIND_CODES[error.kind], error.reason, error.message)

    def status(self) -> status_pb2.Status:
        """The ``google.rpc.Status`` sent in the trailer."""
        details = []
        info = any_pb2.Any()
        info.Pack(
            error_details_pb2.ErrorInfo(reason=self.reason, domain=DOMAIN, metadata=self.metadata)
        )
        details.append(info)
        if self.retry_after_s is not None:
            retry = any_pb2.Any()
            delay = duration_pb2.Duration()
            delay.FromMilliseconds(int(self.retry_after_s * 1000))
            retry.Pack(error_details_pb2.RetryInfo(retry_delay=delay))
            details.append(retry)
        return status_pb2.Status(code=self.code.value[0], message=self.message, details=details)

    def trailing_metadata(self) -> tuple[tuple[str, bytes], ...]:
        """The trailer carrying :meth:`status`."""
        return ((DETAILS_KEY, self.status().SerializeToString()),)


def rate_limited(limit: str, message: str, retry_after_s: float) -> ServiceError:
    """RESOURCE_EXHAUSTED / RATE_LIMITED: the budget ``limit`` (its name in the contract, e.g.
    ``creates_per_address``, carried as ``ErrorInfo.metadata["limit"]``) is spent; retry after
    ``retry_after_s`` (``RetryInfo``)."""
    return ServiceError(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        "RATE_LIMITED",
        message,
        retry_after_s=max(retry_after_s, 0.001),
        metadata={"limit": limit},
    )


def limit_of(error: grpc.RpcError) -> str | None:
    """The limit a RATE_LIMITED call reached (``ErrorInfo.metadata["limit"]``), if any."""
    status = status_of(error)
    for detail in status.details if status is not None else ():
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return str(info.metadata["limit"]) if "limit" in info.metadata else None
    return None


def retry_delay_of(error: grpc.RpcError) -> float | None:
    """The delay (s) of the ``google.rpc.RetryInfo`` a failed call carried, if any."""
    status = status_of(error)
    for detail in status.details if status is not None else ():
        retry = error_details_pb2.RetryInfo()
        if detail.Unpack(retry):
            return float(retry.retry_delay.ToMilliseconds() / 1000)
    return None


def invalid(reason: str, message: str) -> ServiceError:
    """INVALID_ARGUMENT with ``reason``."""
    return ServiceError(grpc.StatusCode.INVALID_ARGUMENT, reason, message)


async def abort(context: Any, error: ServiceError) -> NoReturn:
    """End the current RPC with ``error`` (status code, message and rich details)."""
    await context.abort(error.code, error.message, error.trailing_metadata())
    raise AssertionError("unreachable: context.abort raises")  # pragma: no cover


def status_of(error: grpc.RpcError) -> status_pb2.Status | None:
    """The ``google.rpc.Status`` a failed call carried in its trailer, if any."""
    trailing = error.trailing_metadata() if hasattr(error, "trailing_metadata") else None
    for key, value in trailing or ():
        if key == DETAILS_KEY:
            status = status_pb2.Status()
            status.ParseFromString(value)
            return status
    return None


def reason_of(error: grpc.RpcError) -> str | None:
    """The contract reason (``ErrorInfo.reason``) of a failed call, if it carried one."""
    status = status_of(error)
    if status is None:
        return None
    for detail in status.details:
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            return str(info.reason)
    return None

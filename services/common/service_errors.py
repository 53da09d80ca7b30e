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
from enum import StrEnum
from typing import Any, Final, NoReturn

import grpc
from google.protobuf import any_pb2, duration_pb2
from google.rpc import error_details_pb2, status_pb2

from services.rules import ErrorKind, RuleError

DOMAIN: Final = "dominos.v1"
DETAILS_KEY = "grpc-status-details-bin"


class Reason(StrEnum):
    """The contract's error reasons (``ErrorReason`` of game.proto without its prefix), as
    ``ErrorInfo.reason`` carries them."""

    REQUEST_ID_MALFORMED = "REQUEST_ID_MALFORMED"
    NAME_INVALID = "NAME_INVALID"
    TARGET_INVALID = "TARGET_INVALID"
    TILE_MALFORMED = "TILE_MALFORMED"
    END_MALFORMED = "END_MALFORMED"
    ID_MALFORMED = "ID_MALFORMED"
    COMMAND_MISSING = "COMMAND_MISSING"
    RULES_INVALID = "RULES_INVALID"
    TOKEN_MISSING = "TOKEN_MISSING"
    TOKEN_INVALID = "TOKEN_INVALID"
    NOT_HOST = "NOT_HOST"
    NAME_TAKEN = "NAME_TAKEN"
    TABLE_NOT_FOUND = "TABLE_NOT_FOUND"
    CODE_NOT_FOUND = "CODE_NOT_FOUND"
    TABLE_FULL = "TABLE_FULL"
    GAME_ALREADY_STARTED = "GAME_ALREADY_STARTED"
    NOT_ENOUGH_PLAYERS = "NOT_ENOUGH_PLAYERS"
    ROUND_NOT_IN_PLAY = "ROUND_NOT_IN_PLAY"
    NOT_YOUR_TURN = "NOT_YOUR_TURN"
    TILE_NOT_IN_HAND = "TILE_NOT_IN_HAND"
    TILE_DOES_NOT_FIT = "TILE_DOES_NOT_FIT"
    MUST_PLAY = "MUST_PLAY"
    GAME_OVER = "GAME_OVER"
    TIMER_STALE = "TIMER_STALE"
    MUST_DRAW = "MUST_DRAW"
    CANNOT_DRAW = "CANNOT_DRAW"
    RULES_UNAVAILABLE = "RULES_UNAVAILABLE"
    ROBOTS_UNAVAILABLE = "ROBOTS_UNAVAILABLE"
    FRIENDLY_END_UNAVAILABLE = "FRIENDLY_END_UNAVAILABLE"
    VOTE_OPEN = "VOTE_OPEN"
    NO_VOTE_OPEN = "NO_VOTE_OPEN"
    ALREADY_PROPOSED = "ALREADY_PROPOSED"
    ROBOT_SEAT = "ROBOT_SEAT"
    VERSION_CONFLICT = "VERSION_CONFLICT"
    REQUEST_ID_REUSED = "REQUEST_ID_REUSED"
    STREAM_REPLACED = "STREAM_REPLACED"
    RATE_LIMITED = "RATE_LIMITED"
    UNAVAILABLE = "UNAVAILABLE"
    REQUEST_MALFORMED = "REQUEST_MALFORMED"
    REQUEST_TOO_LARGE = "REQUEST_TOO_LARGE"


class Limit(StrEnum):
    """The budgets and caps a RATE_LIMITED refusal names (``ErrorInfo.metadata["limit"]``)."""

    # the table service's budgets (counted in Redis, cluster-wide)
    CREATES_PER_ADDRESS = "creates_per_address"
    CREATES_PER_SECOND = "creates_per_second"
    LOBBIES_PER_ADDRESS = "lobbies_per_address"
    JOIN_FAILURES_PER_CONNECTION = "join_failures_per_connection"
    JOIN_FAILURES_PER_ADDRESS = "join_failures_per_address"
    LOBBY_CHANGES = "lobby_changes"
    CONNECTIONS_PER_SEAT = "connections_per_seat"
    # a gateway's own caps (counted in its process)
    CONNECTIONS_PER_ADDRESS = "connections_per_address"
    STREAMS_PER_ADDRESS = "streams_per_address"


#: The limits the table service counts (a gateway repeats their refusals, ``refusals``).
TABLE_LIMITS: Final = tuple(Limit)[:7]
#: The caps a gateway applies by itself.
GATEWAY_LIMITS: Final = tuple(Limit)[7:]

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
        reason: Reason,
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
        """The status of an engine rejection: its kind gives the code, its reason the reason,
        the field it names (if any) ``ErrorInfo.metadata["field"]``."""
        metadata = {"field": error.field} if error.field else None
        return cls(_KIND_CODES[error.kind], Reason(error.reason), error.message, metadata=metadata)

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


def rate_limited(limit: Limit, message: str, retry_after_s: float) -> ServiceError:
    """RESOURCE_EXHAUSTED / RATE_LIMITED: the budget ``limit`` (its name in the contract, e.g.
    ``creates_per_address``, carried as ``ErrorInfo.metadata["limit"]``) is spent; retry after
    ``retry_after_s`` (``RetryInfo``)."""
    return ServiceError(
        grpc.StatusCode.RESOURCE_EXHAUSTED,
        Reason.RATE_LIMITED,
        message,
        retry_after_s=max(retry_after_s, 0.001),
        metadata={"limit": limit},
    )


def limit_of(error: grpc.RpcError) -> Limit | None:
    """The limit a RATE_LIMITED call reached (``ErrorInfo.metadata["limit"]``), if it names
    one of :class:`Limit`."""
    status = status_of(error)
    for detail in status.details if status is not None else ():
        info = error_details_pb2.ErrorInfo()
        if detail.Unpack(info):
            name = info.metadata.get("limit", "")
            return Limit(name) if name in Limit.__members__.values() else None
    return None


def retry_delay_of(error: grpc.RpcError) -> float | None:
    """The delay (s) of the ``google.rpc.RetryInfo`` a failed call carried, if any."""
    status = status_of(error)
    for detail in status.details if status is not None else ():
        retry = error_details_pb2.RetryInfo()
        if detail.Unpack(retry):
            return float(retry.retry_delay.ToMilliseconds() / 1000)
    return None


def invalid(reason: Reason, message: str, *, field: str = "") -> ServiceError:
    """INVALID_ARGUMENT with ``reason`` (and the ``field`` it is about, if named)."""
    metadata = {"field": field} if field else None
    return ServiceError(grpc.StatusCode.INVALID_ARGUMENT, reason, message, metadata=metadata)


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

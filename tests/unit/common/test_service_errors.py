"""Service errors as gRPC statuses with the rich error model: codes, ErrorInfo, RetryInfo,
the trailer, and reading the reason back on the client side."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from dominos.v1 import game_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_status import rpc_status

from services.common.service_errors import (
    DETAILS_KEY,
    DOMAIN,
    Reason,
    ServiceError,
    abort,
    invalid,
    reason_of,
    status_of,
)
from services.rules import ALL_REASONS, ErrorKind, RuleError
from services.rules import errors as e

EXPECTED_CODES = {
    e.NameInvalid: grpc.StatusCode.INVALID_ARGUMENT,
    e.TargetInvalid: grpc.StatusCode.INVALID_ARGUMENT,
    e.TileMalformed: grpc.StatusCode.INVALID_ARGUMENT,
    e.EndMalformed: grpc.StatusCode.INVALID_ARGUMENT,
    e.SeatInvalid: grpc.StatusCode.PERMISSION_DENIED,
    e.NotHost: grpc.StatusCode.PERMISSION_DENIED,
    e.TableFull: grpc.StatusCode.FAILED_PRECONDITION,
    e.NameTaken: grpc.StatusCode.FAILED_PRECONDITION,
    e.GameAlreadyStarted: grpc.StatusCode.FAILED_PRECONDITION,
    e.NotEnoughPlayers: grpc.StatusCode.FAILED_PRECONDITION,
    e.RoundNotInPlay: grpc.StatusCode.FAILED_PRECONDITION,
    e.NotYourTurn: grpc.StatusCode.FAILED_PRECONDITION,
    e.TileNotInHand: grpc.StatusCode.FAILED_PRECONDITION,
    e.TileDoesNotFit: grpc.StatusCode.FAILED_PRECONDITION,
    e.MustPlay: grpc.StatusCode.FAILED_PRECONDITION,
    e.GameOver: grpc.StatusCode.FAILED_PRECONDITION,
    e.TimerStale: grpc.StatusCode.FAILED_PRECONDITION,
    e.RulesInvalid: grpc.StatusCode.INVALID_ARGUMENT,
    e.RulesUnavailable: grpc.StatusCode.FAILED_PRECONDITION,
    e.MustDraw: grpc.StatusCode.FAILED_PRECONDITION,
    e.CannotDraw: grpc.StatusCode.FAILED_PRECONDITION,
    e.RobotsUnavailable: grpc.StatusCode.FAILED_PRECONDITION,
    e.FriendlyEndUnavailable: grpc.StatusCode.FAILED_PRECONDITION,
    e.VoteOpen: grpc.StatusCode.FAILED_PRECONDITION,
    e.NoVoteOpen: grpc.StatusCode.FAILED_PRECONDITION,
    e.AlreadyProposed: grpc.StatusCode.FAILED_PRECONDITION,
    e.RobotSeat: grpc.StatusCode.PERMISSION_DENIED,
}


def test_a_rejection_naming_a_field_carries_it_in_the_error_info() -> None:
    """A rule choice refused says which part (``ErrorInfo.metadata["field"]``, D9)."""
    error = ServiceError.from_rule(e.RulesInvalid("no such seat count", field="seats"))
    assert (error.reason, error.metadata) == (Reason.RULES_INVALID, {"field": "seats"})
    assert ServiceError.from_rule(e.MustPlay("a tile fits")).metadata == {}


class FakeRpcError(grpc.RpcError):  # type: ignore[misc]
    """A failed call as a client sees it: a code, details and trailing metadata."""

    def __init__(self, error: ServiceError | None, trailer: Any = ()) -> None:
        super().__init__()
        self.error = error
        self.trailer = error.trailing_metadata() if error is not None else trailer

    def code(self) -> grpc.StatusCode:
        return self.error.code if self.error is not None else grpc.StatusCode.UNKNOWN

    def details(self) -> str:
        return self.error.message if self.error is not None else ""

    def trailing_metadata(self) -> Any:
        return self.trailer


def _details(status: status_pb2.Status) -> list[object]:
    out: list[object] = []
    for detail in status.details:
        for kind in (error_details_pb2.ErrorInfo, error_details_pb2.RetryInfo):
            message = kind()
            if detail.Unpack(message):
                out.append(message)
    return out


# --- from_rule ------------------------------------------------------------------------------


def test_the_expected_codes_cover_every_engine_reason() -> None:
    assert {cls.reason for cls in EXPECTED_CODES} == ALL_REASONS


@pytest.mark.parametrize(("rule_error", "code"), EXPECTED_CODES.items(), ids=str)
def test_from_rule_maps_each_engine_error_to_its_grpc_code_and_keeps_its_reason(
    rule_error: type[RuleError], code: grpc.StatusCode
) -> None:
    error = ServiceError.from_rule(rule_error("the detail"))
    assert error.code == code
    assert error.reason == rule_error.reason
    assert error.message == "the detail"
    assert error.retry_after_s is None


@pytest.mark.parametrize("kind", list(ErrorKind))
def test_from_rule_maps_each_error_kind_to_the_status_code_of_the_same_name(
    kind: ErrorKind,
) -> None:
    class Custom(RuleError):
        reason = "NOT_YOUR_TURN"

    Custom.kind = kind
    assert ServiceError.from_rule(Custom()).code.name == kind.value


def test_invalid_is_invalid_argument_with_the_reason_given() -> None:
    error = invalid(Reason.TILE_MALFORMED, "bad tile")
    assert (error.code, error.reason, error.message) == (
        grpc.StatusCode.INVALID_ARGUMENT,
        "TILE_MALFORMED",
        "bad tile",
    )
    assert "INVALID_ARGUMENT" in str(error) and "TILE_MALFORMED" in str(error)


# --- status and trailer ---------------------------------------------------------------------


def test_status_carries_the_code_message_and_an_error_info_in_the_dominos_domain() -> None:
    error = ServiceError(grpc.StatusCode.FAILED_PRECONDITION, Reason.NOT_YOUR_TURN, "seat 2 plays")
    status = error.status()
    assert status.code == 9  # FAILED_PRECONDITION in google.rpc.Code
    assert status.message == "seat 2 plays"
    assert _details(status) == [error_details_pb2.ErrorInfo(reason="NOT_YOUR_TURN", domain=DOMAIN)]
    assert DOMAIN == "dominos.v1"


def test_status_adds_retry_info_only_when_a_retry_delay_is_set() -> None:
    limited = ServiceError(
        grpc.StatusCode.RESOURCE_EXHAUSTED, Reason.RATE_LIMITED, "slow down", retry_after_s=2.5
    )
    info, retry = _details(limited.status())
    assert info == error_details_pb2.ErrorInfo(reason="RATE_LIMITED", domain=DOMAIN)
    assert isinstance(retry, error_details_pb2.RetryInfo)
    assert (retry.retry_delay.seconds, retry.retry_delay.nanos) == (2, 500_000_000)
    assert retry.retry_delay.ToMilliseconds() == 2_500

    plain = ServiceError(grpc.StatusCode.RESOURCE_EXHAUSTED, Reason.RATE_LIMITED, "slow down")
    assert len(plain.status().details) == 1


def test_a_zero_retry_delay_is_still_sent() -> None:
    error = ServiceError(grpc.StatusCode.UNAVAILABLE, Reason.UNAVAILABLE, "x", retry_after_s=0.0)
    assert len(error.status().details) == 2


def test_the_trailer_is_the_serialized_status_under_grpc_status_details_bin() -> None:
    error = ServiceError(grpc.StatusCode.NOT_FOUND, Reason.TABLE_NOT_FOUND, "no such table")
    ((key, value),) = error.trailing_metadata()
    assert key == DETAILS_KEY == "grpc-status-details-bin"
    assert status_pb2.Status.FromString(value) == error.status()


def test_the_trailer_agrees_with_the_call_status_as_grpc_status_requires() -> None:
    error = ServiceError(
        grpc.StatusCode.ALREADY_EXISTS, Reason.REQUEST_ID_REUSED, "reused", retry_after_s=1
    )
    status = rpc_status.from_call(FakeRpcError(error))  # raises if code or message disagree
    assert status is not None
    assert status.code == grpc.StatusCode.ALREADY_EXISTS.value[0]


# --- reading it back ------------------------------------------------------------------------


def test_the_reasons_are_the_contracts_error_reasons_and_cover_the_engines() -> None:
    names = {
        name.removeprefix("ERROR_REASON_")
        for name in game_pb2.ErrorReason.DESCRIPTOR.values_by_name
    }
    assert {reason.value for reason in Reason} == names - {"UNSPECIFIED"}
    assert {reason.value for reason in Reason} >= ALL_REASONS


@pytest.mark.parametrize("reason", list(Reason))
def test_reason_of_reads_the_reason_back_from_a_failed_call(reason: Reason) -> None:
    error = ServiceError(grpc.StatusCode.ABORTED, reason, "m", retry_after_s=3)
    assert reason_of(FakeRpcError(error)) == reason
    assert status_of(FakeRpcError(error)) == error.status()


def test_status_of_finds_the_details_among_other_trailing_metadata() -> None:
    error = ServiceError(grpc.StatusCode.PERMISSION_DENIED, Reason.NOT_HOST, "host only")
    trailer = (("x-trace", "abc"), *error.trailing_metadata(), ("x-other", "1"))
    call = FakeRpcError(None, trailer)
    assert status_of(call) == error.status()
    assert reason_of(call) == "NOT_HOST"


@pytest.mark.parametrize("trailer", [(), None, (("x-trace", "abc"),)])
def test_a_call_without_details_has_no_status_and_no_reason(trailer: Any) -> None:
    call = FakeRpcError(None, trailer)
    assert status_of(call) is None
    assert reason_of(call) is None


def test_an_error_without_trailing_metadata_has_no_reason() -> None:
    assert status_of(grpc.RpcError()) is None
    assert reason_of(grpc.RpcError()) is None


def test_a_status_without_error_info_has_no_reason() -> None:
    bare = status_pb2.Status(code=5, message="not found")
    call = FakeRpcError(None, ((DETAILS_KEY, bare.SerializeToString()),))
    assert status_of(call) == bare
    assert reason_of(call) is None


def test_reason_of_skips_details_that_are_not_error_info() -> None:
    error = ServiceError(
        grpc.StatusCode.RESOURCE_EXHAUSTED, Reason.RATE_LIMITED, "m", retry_after_s=1
    )
    status = error.status()
    status.details.reverse()  # RetryInfo first
    call = FakeRpcError(None, ((DETAILS_KEY, status.SerializeToString()),))
    assert reason_of(call) == "RATE_LIMITED"


# --- abort ----------------------------------------------------------------------------------


class _Aborted(Exception):
    pass


class FakeContext:
    def __init__(self) -> None:
        self.calls: list[tuple[Any, ...]] = []

    async def abort(self, code: grpc.StatusCode, details: str, trailing: Any) -> None:
        self.calls.append((code, details, trailing))
        raise _Aborted


async def test_abort_ends_the_rpc_with_the_code_message_and_trailer() -> None:
    context = FakeContext()
    error = ServiceError(grpc.StatusCode.FAILED_PRECONDITION, Reason.MUST_PLAY, "a tile fits")
    with pytest.raises(_Aborted):
        await abort(context, error)
    assert context.calls == [
        (grpc.StatusCode.FAILED_PRECONDITION, "a tile fits", error.trailing_metadata())
    ]

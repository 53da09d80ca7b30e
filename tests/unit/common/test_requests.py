"""Validation of incoming requests: each malformed value is refused with its gRPC code and
contract reason before any state is read; valid values come back normalised."""

from __future__ import annotations

import hashlib
import secrets
import uuid
from collections.abc import Callable

import grpc
import pytest
from dominos.v1 import game_pb2, gateway_pb2

from services.common import credentials, requests
from services.common.service_errors import Reason, ServiceError
from services.rules import PRESETS
from services.rules.tiles import INDEX

INVALID = grpc.StatusCode.INVALID_ARGUMENT


def _refusal(call: Callable[[], object]) -> tuple[grpc.StatusCode, str]:
    with pytest.raises(ServiceError) as caught:
        call()
    return caught.value.code, caught.value.reason


# --- request ids ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "",
        "a" * 65,
        "x" * 1_000,
        "req\n1",
        "req\t1",
        "req\x00",
        "req\x7f",  # DEL is not printable
        "requête",  # not ASCII
        "req-🂡",
        "\u00a0",  # a non-breaking space is not ASCII
    ],
    ids=repr,
)
def test_a_malformed_request_id_is_invalid_argument_request_id_malformed(value: str) -> None:
    assert _refusal(lambda: requests.request_id(value)) == (INVALID, "REQUEST_ID_MALFORMED")


@pytest.mark.parametrize("value", ["a", "a" * 64, " ", "~", "req-1 {retry: 2}", "!" * 10])
def test_a_request_id_of_1_to_64_printable_ascii_characters_is_accepted(value: str) -> None:
    assert requests.request_id(value) == value


@pytest.mark.parametrize(
    "value",
    ["1", "join-1", "r" * 21, "a" * 40, "ab" * 20, "0101010101010101010101", "abcde" * 8],
)
def test_a_create_or_join_request_id_anyone_could_guess_is_refused(value: str) -> None:
    """Issue 13: a create/join retry answers the seat token, so its id must be a secret."""
    assert _refusal(lambda: requests.secret_request_id(value)) == (
        INVALID,
        "REQUEST_ID_MALFORMED",
    )


@pytest.mark.parametrize(
    "value",
    [str(uuid.uuid4()), uuid.uuid4().hex, secrets.token_urlsafe(16), secrets.token_hex(32)],
)
def test_a_random_request_id_of_128_bits_is_a_valid_secret_request_id(value: str) -> None:
    assert requests.secret_request_id(value) == value


def test_random_uuids_are_practically_never_refused() -> None:
    assert all(requests.secret_request_id(uuid.uuid4().hex) for _ in range(20_000))


def test_request_hash_is_the_first_8_bytes_of_the_sha256_of_the_id() -> None:
    digest = requests.request_hash("req-1")
    assert len(digest) == 8
    assert digest == hashlib.sha256(b"req-1").digest()[:8]
    assert requests.request_hash("req-1") == digest
    assert requests.request_hash("req-2") != digest


# --- fingerprints ---------------------------------------------------------------------------


def _play(**changes: object) -> gateway_pb2.PlayTileRequest:
    fields: dict[str, object] = {
        "request_id": "req-1",
        "table_id": "Qm9uam91ciBsZXMgYW1pcw",
        "tile": game_pb2.Tile(low=2, high=5),
        "end": game_pb2.END_LEFT,
        "expected_version": 7,
    }
    fields.update(changes)
    return gateway_pb2.PlayTileRequest(**fields)  # type: ignore[arg-type]


def test_a_fingerprint_is_8_bytes_and_the_same_for_the_same_payload() -> None:
    assert len(requests.fingerprint(_play())) == 8
    assert requests.fingerprint(_play()) == requests.fingerprint(_play())


@pytest.mark.parametrize(
    "changes",
    [
        {"request_id": "req-2"},
        {"table_id": "Qm9uam91ciBsZXMgYW1pcx"},
        {"tile": game_pb2.Tile(low=2, high=6)},
        {"tile": game_pb2.Tile(low=3, high=5)},
        {"end": game_pb2.END_RIGHT},
        {"expected_version": 8},
        {"expected_version": 0},
    ],
    ids=repr,
)
def test_a_fingerprint_changes_when_any_field_changes(changes: dict[str, object]) -> None:
    assert requests.fingerprint(_play(**changes)) != requests.fingerprint(_play())


def test_a_fingerprint_changes_with_the_invitation_code_of_a_join() -> None:
    join = gateway_pb2.JoinTableRequest(request_id="r", invitation_code="ABCDEFGHJK")
    other = gateway_pb2.JoinTableRequest(request_id="r", invitation_code="ABCDEFGHJM")
    assert requests.fingerprint(join) != requests.fingerprint(other)


def test_a_fingerprint_tells_apart_requests_of_other_rpcs_with_the_same_fields() -> None:
    # Pass, Start and Leave share their wire layout: a request id reused across them must
    # not be answered as a repeat (ALREADY_EXISTS / REQUEST_ID_REUSED instead).
    rid, table, version = "r", "t" * 22, 7
    same_bytes = [
        gateway_pb2.PassRequest(request_id=rid, table_id=table, expected_version=version),
        gateway_pb2.StartGameRequest(request_id=rid, table_id=table, expected_version=version),
        gateway_pb2.LeaveTableRequest(request_id=rid, table_id=table, expected_version=version),
    ]
    assert len({m.SerializeToString() for m in same_bytes}) == 1
    assert len({requests.fingerprint(m) for m in same_bytes}) == 3


# --- names and targets ------------------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    ["", "   ", "\t\n", "a" * 25, "a" * 257, "a" * 10_000, "Zo\x00é", "Bob\u200b", "A\u2028B"],
    ids=repr,
)
def test_an_invalid_name_is_invalid_argument_name_invalid(value: str) -> None:
    assert _refusal(lambda: requests.name(value)) == (INVALID, "NAME_INVALID")


def test_a_raw_name_over_256_characters_is_refused_before_trimming() -> None:
    assert requests.name(" " * 250 + "Bob") == "Bob"
    assert _refusal(lambda: requests.name(" " * 254 + "Bob")) == (INVALID, "NAME_INVALID")


@pytest.mark.parametrize(
    ("value", "expected"),
    [("Zoé", "Zoé"), ("  Bob  ", "Bob"), ("a" * 24, "a" * 24), ("戴 🂡", "戴 🂡")],
)
def test_a_valid_name_is_accepted_trimmed(value: str, expected: str) -> None:
    assert requests.name(value) == expected


@pytest.mark.parametrize("zero_means_default", [True, False])
@pytest.mark.parametrize("value", [1, 25, 49, 75, 501, 550, 1_000, 2**32 - 1])
def test_r16_a_target_off_the_50_to_500_grid_is_invalid_argument_target_invalid(
    value: int, zero_means_default: bool
) -> None:
    refusal = _refusal(lambda: requests.target(value, zero_means_default=zero_means_default))
    assert refusal == (INVALID, "TARGET_INVALID")


@pytest.mark.parametrize("value", range(50, 501, 50))
def test_r16_a_target_on_the_grid_is_accepted(value: int) -> None:
    assert requests.target(value, zero_means_default=False) == value
    assert requests.target(value, zero_means_default=True) == value


def test_r16_zero_means_the_default_100_only_where_allowed() -> None:
    assert requests.target(0, zero_means_default=True) == 100
    assert _refusal(lambda: requests.target(0, zero_means_default=False)) == (
        INVALID,
        "TARGET_INVALID",
    )


# --- tiles and ends -------------------------------------------------------------------------


@pytest.mark.parametrize(("low", "high"), [(a, b) for a in range(7) for b in range(a, 7)])
def test_every_double_six_tile_maps_to_its_engine_index(low: int, high: int) -> None:
    assert requests.tile(low, high) == INDEX[low][high]


def test_the_28_tiles_map_to_28_distinct_indices() -> None:
    indices = {requests.tile(a, b) for a in range(7) for b in range(a, 7)}
    assert indices == set(range(28))


@pytest.mark.parametrize(("low", "high"), [(1, 0), (6, 5), (3, 2), (0, 7), (7, 7), (6, 99)])
def test_a_tile_with_low_above_high_or_a_half_above_6_is_tile_malformed(
    low: int, high: int
) -> None:
    assert _refusal(lambda: requests.tile(low, high)) == (INVALID, "TILE_MALFORMED")


@pytest.mark.parametrize(
    "value", [game_pb2.END_LEFT, game_pb2.END_RIGHT, game_pb2.END_UP, game_pb2.END_DOWN]
)
def test_left_right_and_the_spinners_short_sides_are_valid_ends(value: int) -> None:
    """END_UP and END_DOWN pass the request check; the engine accepts them only under the
    all-fives scoring (EndMalformed elsewhere)."""
    assert requests.end(value) == value


@pytest.mark.parametrize("value", [game_pb2.END_UNSPECIFIED, 5, 7, -1])
def test_any_other_end_is_end_malformed(value: int) -> None:
    assert _refusal(lambda: requests.end(value)) == (INVALID, "END_MALFORMED")


# --- table ids and invitation codes ---------------------------------------------------------


def test_a_table_id_of_the_right_shape_is_accepted() -> None:
    table_id = credentials.new_table_id()
    assert requests.table_id(table_id) == table_id


@pytest.mark.parametrize(
    "value", ["", "short", "A" * 21, "A" * 23, "A" * 21 + "/", "A" * 21 + "=", "A" * 21 + "é"]
)
def test_a_table_id_of_the_wrong_shape_is_id_malformed(value: str) -> None:
    assert _refusal(lambda: requests.table_id(value)) == (INVALID, "ID_MALFORMED")


@pytest.mark.parametrize(
    ("typed", "expected"),
    [("ABCDEFGHJK", "ABCDEFGHJK"), ("abcde-fghjk", "ABCDEFGHJK"), (" zz99x y22mn ", "ZZ99XY22MN")],
)
def test_s1_an_invitation_code_is_accepted_normalised(typed: str, expected: str) -> None:
    assert requests.invitation_code(typed) == expected


@pytest.mark.parametrize(
    "typed", ["", "ABCDEFGH", "ABCDEFGHJ", "ABCDEFGHJ0", "ABCDEFGHJI", "abcdefghju", "A" * 10_000]
)
def test_an_invitation_code_that_cannot_exist_is_id_malformed(typed: str) -> None:
    assert _refusal(lambda: requests.invitation_code(typed)) == (INVALID, "ID_MALFORMED")


# --- seat tokens ----------------------------------------------------------------------------


def test_d7_a_missing_seat_token_is_unauthenticated_token_missing() -> None:
    assert _refusal(lambda: requests.seat_token("")) == (
        grpc.StatusCode.UNAUTHENTICATED,
        "TOKEN_MISSING",
    )


@pytest.mark.parametrize(
    "value", ["x", "A" * 42, "A" * 44, "Bearer " + "A" * 43, "A" * 42 + "=", "A" * 42 + "/"]
)
def test_d7_a_seat_token_of_the_wrong_shape_is_permission_denied_token_invalid(
    value: str,
) -> None:
    assert _refusal(lambda: requests.seat_token(value)) == (
        grpc.StatusCode.PERMISSION_DENIED,
        "TOKEN_INVALID",
    )


def test_d7_a_seat_token_of_the_right_shape_is_accepted() -> None:
    token = credentials.seat_token(b"secret", credentials.new_table_id(), 2, "ab" * 32)
    assert requests.seat_token(token) == token


def test_table_options_far_out_of_range_name_their_field_issue_20() -> None:
    for field in ("return_seconds", "vote_seconds"):
        choice = game_pb2.TableOptions(
            replace_disconnected=game_pb2.ROBOT_LEVEL_SOLID, friendly_end=True
        )
        setattr(choice, field, 2**32 - 1)
        with pytest.raises(ServiceError) as refused:
            requests.options(choice, PRESETS["site"])
        assert refused.value.reason == Reason.RULES_INVALID
        assert refused.value.metadata == {"field": field}

"""table_of: the table every table-service request is about, for table-affine routing."""

from __future__ import annotations

import json

import pytest
from dominos.v1 import gateway_pb2, table_pb2

from services.common.table_routing import (
    RING_HASH_SWITCH,
    SERVICE_CONFIG,
    TABLE_HEADER,
    enable_request_hash,
    table_of,
)


def _id(n: int) -> str:
    """A well-formed table id (22 characters of URL-safe base64)."""
    return f"{n:022d}"


def test_every_request_about_a_table_names_it_and_the_others_name_none() -> None:
    play = gateway_pb2.PlayTileRequest(table_id=_id(1))
    assert table_of(table_pb2.ExecuteRequest(play_tile=play)) == _id(1)
    assert table_of(table_pb2.ExecuteRequest(leave_table={"table_id": _id(2)})) == _id(2)
    assert table_of(table_pb2.SetPresenceRequest(table_id=_id(3))) == _id(3)
    assert table_of(table_pb2.GetViewRequest(table_id=_id(4))) == _id(4)
    assert table_of(table_pb2.GetSnapshotRequest(table_id=_id(5))) == _id(5)
    assert table_of(table_pb2.RobotViewRequest(table_id=_id(6))) == _id(6)
    assert table_of(table_pb2.RobotActRequest(seat=1, **{"pass": {"table_id": _id(7)}})) == _id(7)
    # Creates and joins by code are about no table yet: any replica.
    assert table_of(table_pb2.ExecuteRequest(create_table={"host_name": "A"})) == ""
    assert table_of(table_pb2.ExecuteRequest(join_table={"invitation_code": "ABC"})) == ""
    assert table_of(table_pb2.ExecuteRequest()) == ""


@pytest.mark.parametrize(
    "table_id", ["\x1f", "t1", "a" * 23, "x" * 8000, "ab cd" + "e" * 17, "é" * 22, "a\nb" * 7]
)
def test_a_malformed_table_id_never_becomes_a_header(table_id: str) -> None:
    """A client's id of any other shape (control characters, any length) routes like a
    create: gRPC refuses a header value outside printable ASCII, and the call must still
    reach a replica to be answered ID_MALFORMED."""
    assert table_of(table_pb2.GetViewRequest(table_id=table_id)) == ""
    play = gateway_pb2.PlayTileRequest(table_id=table_id)
    assert table_of(table_pb2.ExecuteRequest(play_tile=play)) == ""


def test_the_channel_hashes_the_table_header_and_the_switch_is_on_unless_set() -> None:
    config = json.loads(SERVICE_CONFIG)
    assert config["loadBalancingConfig"][0]["ring_hash_experimental"] == {
        "requestHashHeader": TABLE_HEADER
    }
    env: dict[str, str] = {}
    enable_request_hash(env)
    assert env == {RING_HASH_SWITCH: "true"}
    env = {RING_HASH_SWITCH: "false"}  # an operator's choice stands
    enable_request_hash(env)
    assert env == {RING_HASH_SWITCH: "false"}

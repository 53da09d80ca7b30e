"""The contract (protos) and the code agree: generated stubs, enums and error reasons."""

from __future__ import annotations

import filecmp
import tempfile
from pathlib import Path
from typing import Any

import grpc_tools
import pytest
from dominos.v1 import errors_pb2, events_pb2, game_pb2, gateway_pb2, table_pb2
from google.protobuf import descriptor_pb2
from google.rpc import error_details_pb2, status_pb2
from grpc_tools import protoc

from services.rules import ALL_REASONS, AutoCause, End, Outcome, Phase
from tools import gen_protos

ROOT = Path(__file__).resolve().parents[3]


def test_generated_stubs_are_exactly_what_the_protos_compile_to() -> None:
    installed = Path(game_pb2.__file__).parent
    with tempfile.TemporaryDirectory() as tmp:
        gen_protos.compile_into(Path(tmp))
        fresh = Path(tmp) / "dominos" / "v1"
        names = sorted(p.name for p in fresh.iterdir())
        assert names == sorted(p.name for p in installed.iterdir() if p.name != "__pycache__")
        _, mismatch, errors = filecmp.cmpfiles(fresh, installed, names, shallow=False)
        assert mismatch == [] and errors == [], "stubs drifted: run `make proto`"


@pytest.mark.parametrize("module", [status_pb2, error_details_pb2])
def test_the_vendored_error_model_describes_the_same_messages_as_googleapis(
    module: Any,
) -> None:
    """protos/google/rpc (for other languages) and the googleapis-common-protos package
    (which Python loads) describe the same messages, field for field."""
    name = module.DESCRIPTOR.name
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "set.binpb"
        include = Path(grpc_tools.__file__).parent / "_proto"
        args = ["protoc", f"-I{ROOT / 'protos'}", f"-I{include}", f"-o{out}", name]
        assert protoc.main(args) == 0
        vendored = descriptor_pb2.FileDescriptorSet.FromString(out.read_bytes()).file[0]
    installed = descriptor_pb2.FileDescriptorProto.FromString(module.DESCRIPTOR.serialized_pb)
    _without_json_names(vendored.message_type)  # protoc -o adds them, serialized_pb has none
    _without_json_names(installed.message_type)
    assert vendored.message_type == installed.message_type
    assert vendored.package == installed.package


def _without_json_names(messages: Any) -> None:
    for message in messages:
        for field in message.field:
            field.ClearField("json_name")
        _without_json_names(message.nested_type)


def test_the_error_details_message_names_the_types_clients_decode() -> None:
    fields = {
        f.name: f.message_type.full_name if f.message_type is not None else ""
        for f in errors_pb2.ErrorDetails.DESCRIPTOR.fields
    }
    assert fields == {
        "status": "google.rpc.Status",
        "error_info": "google.rpc.ErrorInfo",
        "retry_info": "google.rpc.RetryInfo",
    }


def test_every_engine_reason_is_a_documented_error_reason() -> None:
    documented = {
        name.removeprefix("ERROR_REASON_")
        for name in game_pb2.ErrorReason.keys()  # noqa: SIM118 (an EnumTypeWrapper)
        if name != "ERROR_REASON_UNSPECIFIED"
    }
    assert documented >= ALL_REASONS


@pytest.mark.parametrize(
    ("engine_enum", "proto_enum", "prefix"),
    [
        (Phase, game_pb2.Phase, "PHASE_"),
        (End, game_pb2.End, "END_"),
        (Outcome, game_pb2.RoundOutcome, "ROUND_OUTCOME_"),
    ],
)
def test_engine_enums_have_the_contracts_numbers(
    engine_enum: type, proto_enum: object, prefix: str
) -> None:
    for member in engine_enum:  # type: ignore[attr-defined]
        assert proto_enum.Value(prefix + member.name) == member.value  # type: ignore[attr-defined]


def test_auto_play_causes_have_the_contracts_numbers() -> None:
    assert game_pb2.AutoPlayCause.Value("AUTO_PLAY_CAUSE_TIMEOUT") == AutoCause.TIMEOUT
    assert game_pb2.AutoPlayCause.Value("AUTO_PLAY_CAUSE_AWAY") == AutoCause.AWAY


def test_every_public_command_takes_a_request_id() -> None:
    commands: list[Any] = [
        gateway_pb2.CreateTableRequest,
        gateway_pb2.JoinTableRequest,
        gateway_pb2.LeaveTableRequest,
        gateway_pb2.SetTargetRequest,
        gateway_pb2.StartGameRequest,
        gateway_pb2.PlayTileRequest,
        gateway_pb2.PassRequest,
    ]
    for message in commands:
        assert "request_id" in message.DESCRIPTOR.fields_by_name, message.DESCRIPTOR.name


def test_the_internal_api_covers_every_public_command() -> None:
    oneof = table_pb2.ExecuteRequest.DESCRIPTOR.oneofs_by_name["command"]
    carried = {f.message_type.name for f in oneof.fields if f.message_type is not None}
    public = {
        m.input_type.name
        for m in gateway_pb2.DESCRIPTOR.services_by_name["DominosService"].methods
        # Reads and the gateway's own answer are no commands.
        if m.input_type.name
        not in ("GetTableViewRequest", "WatchTableRequest", "GetServerInfoRequest")
    }
    assert carried == public


def test_bus_payloads_carry_versions_and_deadlines() -> None:
    fields = events_pb2.TableEvent.DESCRIPTOR.fields_by_name
    assert {"table_id", "version", "state", "deadline_ms", "turn_number"} <= set(fields)

"""Answers already serialised (issue 22): ``serialized_answers`` lets the named methods'
handlers answer bytes, sent as they are, and every other answer is serialised as before; and
every seat's command response that answers a view is, byte for byte, ``view_answer_bytes`` of it
(field 1, nothing else), which is what the table service sends instead of building it."""

from __future__ import annotations

from typing import Any

import grpc
import pytest
from dominos.v1 import gateway_pb2, table_pb2

from services.common.commands import COMMANDS
from services.common.handler_wrapping import serialized_answers
from services.common.projection import table_view, view_answer_bytes
from services.rules.binary import varint
from services.table.servicer import _RESULT_TAGS, EXECUTE_METHOD
from testing.games import new_game

NOW = 1_800_000_000_000


async def _behavior(request: Any, context: Any) -> Any:
    return request


def _handler() -> Any:
    return grpc.unary_unary_rpc_method_handler(
        _behavior,
        request_deserializer=table_pb2.ExecuteRequest.FromString,
        response_serializer=table_pb2.ExecuteResponse.SerializeToString,
    )


def test_a_named_methods_bytes_are_sent_as_they_are_and_messages_serialised() -> None:
    handler = serialized_answers(EXECUTE_METHOD)(EXECUTE_METHOD, _handler())
    answer = table_pb2.ExecuteResponse(leave_table=gateway_pb2.LeaveTableResponse(version=7))
    assert handler.response_serializer(b"\x62\x02\x08\x07") == b"\x62\x02\x08\x07"
    assert handler.response_serializer(answer) == answer.SerializeToString()
    assert handler.unary_unary is _behavior
    assert handler.request_deserializer == table_pb2.ExecuteRequest.FromString


def test_other_methods_keep_their_serializer() -> None:
    original = _handler()
    assert serialized_answers(EXECUTE_METHOD)("/dominos.v1.TableService/GetView", original) is (
        original
    )
    with pytest.raises(TypeError):
        original.response_serializer(b"raw")


@pytest.mark.parametrize(
    "spec", [s for s in COMMANDS if s.seated and s.answers_view], ids=lambda s: s.rpc
)
def test_a_seats_response_that_answers_a_view_is_its_view_as_field_1_and_nothing_else(
    spec: Any,
) -> None:
    (field,) = spec.response.DESCRIPTOR.fields
    assert (field.name, field.number) == ("view", 1)
    view = table_view(new_game(3).state, 2, NOW)
    assert view_answer_bytes(view.SerializeToString()) == (
        spec.response(view=view).SerializeToString()
    )


@pytest.mark.parametrize("spec", COMMANDS, ids=lambda s: s.rpc)
def test_the_envelope_built_from_bytes_parses_as_the_execute_response(spec: Any) -> None:
    """What ``TableServicer`` sends: the command's field tag, the answer's length, the answer."""
    if spec.answers_view and spec.seated:
        answer = spec.response(view=table_view(new_game(4).state, 1, NOW))
    elif spec.answers_view:
        answer = spec.response(table_id="t", seat=2, view=table_view(new_game(5).state, 2, NOW))
    else:
        answer = spec.response(version=9)
    inner = answer.SerializeToString()
    built = _RESULT_TAGS[spec.field] + varint(len(inner)) + inner
    assert table_pb2.ExecuteResponse.FromString(built) == table_pb2.ExecuteResponse(
        **{spec.field: answer}
    )
    assert built == table_pb2.ExecuteResponse(**{spec.field: answer}).SerializeToString()

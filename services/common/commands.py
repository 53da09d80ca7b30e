"""The table commands of the contract, described once.

Each :class:`CommandSpec` names a command's public RPC (``DominosService``), its field in the
internal ``ExecuteRequest``/``ExecuteResponse`` envelope, its request and response messages,
and how the services treat it: whether it needs a seat token, whether it changes a lobby
(counted against the table's ``lobby_changes`` budget, D6). The gateway builds its forwarding
methods from this table, the table service dispatches on it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Final

from dominos.v1 import gateway_pb2

__all__ = [
    "ANSWER_FRIENDLY_END",
    "BY_FIELD",
    "COMMANDS",
    "CREATE_TABLE",
    "DRAW_TILE",
    "JOIN_TABLE",
    "LEAVE_TABLE",
    "PASS",
    "PLAY_TILE",
    "PROPOSE_FRIENDLY_END",
    "SET_TARGET",
    "START_GAME",
    "CommandSpec",
    "spec_of",
]


@dataclass(frozen=True, slots=True)
class CommandSpec:
    """One command of the contract."""

    #: The ``DominosService`` method.
    rpc: str
    #: Its field in ``ExecuteRequest.command`` and ``ExecuteResponse.result``.
    field: str
    request: type[Any]
    response: type[Any]
    #: Sent for a seat (``authorization: Bearer <seat token>``).
    seated: bool = True
    #: Changes a lobby: counted against the table's lobby-change budget.
    lobby_change: bool = False
    #: The response carries the seat's view after the command (``view`` field).
    answers_view: bool = True


CREATE_TABLE: Final = CommandSpec(
    "CreateTable",
    "create_table",
    gateway_pb2.CreateTableRequest,
    gateway_pb2.CreateTableResponse,
    seated=False,
)
JOIN_TABLE: Final = CommandSpec(
    "JoinTable",
    "join_table",
    gateway_pb2.JoinTableRequest,
    gateway_pb2.JoinTableResponse,
    seated=False,
    lobby_change=True,
)
LEAVE_TABLE: Final = CommandSpec(
    "LeaveTable",
    "leave_table",
    gateway_pb2.LeaveTableRequest,
    gateway_pb2.LeaveTableResponse,
    lobby_change=True,
    answers_view=False,
)
SET_TARGET: Final = CommandSpec(
    "SetTarget",
    "set_target",
    gateway_pb2.SetTargetRequest,
    gateway_pb2.SetTargetResponse,
    lobby_change=True,
)
START_GAME: Final = CommandSpec(
    "StartGame", "start_game", gateway_pb2.StartGameRequest, gateway_pb2.StartGameResponse
)
PLAY_TILE: Final = CommandSpec(
    "PlayTile", "play_tile", gateway_pb2.PlayTileRequest, gateway_pb2.PlayTileResponse
)
PASS: Final = CommandSpec("Pass", "pass", gateway_pb2.PassRequest, gateway_pb2.PassResponse)
DRAW_TILE: Final = CommandSpec(
    "DrawTile", "draw_tile", gateway_pb2.DrawTileRequest, gateway_pb2.DrawTileResponse
)
PROPOSE_FRIENDLY_END: Final = CommandSpec(
    "ProposeFriendlyEnd",
    "propose_friendly_end",
    gateway_pb2.ProposeFriendlyEndRequest,
    gateway_pb2.ProposeFriendlyEndResponse,
)
ANSWER_FRIENDLY_END: Final = CommandSpec(
    "AnswerFriendlyEnd",
    "answer_friendly_end",
    gateway_pb2.AnswerFriendlyEndRequest,
    gateway_pb2.AnswerFriendlyEndResponse,
)

COMMANDS: Final = (
    CREATE_TABLE,
    JOIN_TABLE,
    LEAVE_TABLE,
    SET_TARGET,
    START_GAME,
    PLAY_TILE,
    PASS,
    DRAW_TILE,
    PROPOSE_FRIENDLY_END,
    ANSWER_FRIENDLY_END,
)
#: The commands by their envelope field.
BY_FIELD: Final[Mapping[str, CommandSpec]] = MappingProxyType({c.field: c for c in COMMANDS})
_BY_TYPE: Final = {c.request: c for c in COMMANDS}


def spec_of(request: Any) -> CommandSpec:
    """The command a request message is (``KeyError`` for any other message)."""
    return _BY_TYPE[type(request)]

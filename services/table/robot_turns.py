"""Telling the bots service that a robot has to act (issue 20).

After a commit at which the seat to act is played by a robot (it holds the seat, or stands
in for its dropped player), the table service publishes a :class:`RobotTurn` on the robots'
work queue: ids only, never state (the bots service reads the seat's own view). The
JetStream message id ``<table_id>:<version>`` makes a re-publish harmless. A turn that
never reaches a robot (a crash between commit and publish, the bots service down) costs
the short clock: the table then plays the seat as it plays an away player's (R11, S3).
"""

from __future__ import annotations

from typing import Any

from dominos.v1 import events_pb2

from services.common.bus import ROBOT_STREAM, ROBOT_SUBJECT, message_id
from services.common.dependency_metrics import timed_publish
from services.rules import Phase, TableState
from services.rules.robot_seats import robot_plays


def robot_turn(state: TableState) -> events_pb2.RobotTurn | None:
    """The robot's turn at ``state``, or None when no robot is to act."""
    rnd = state.round
    if state.phase is not Phase.PLAYING or rnd is None or state.vote is not None:
        return None
    seat = rnd.turn
    if not robot_plays(state, seat):
        return None
    level = state.robots[seat] or state.options.replace_level
    return events_pb2.RobotTurn(
        table_id=state.table_id,
        version=state.version,
        seat=seat,
        level=level,  # type: ignore[arg-type]
        deadline_ms=state.deadline_ms,
    )


class RobotTurnPublisher:
    """Publishes robots' turns on JetStream."""

    def __init__(self, js: Any) -> None:
        self.js = js

    async def publish(self, state: TableState) -> bool:
        """Publish the robot's turn at ``state`` if there is one; whether one was."""
        turn = robot_turn(state)
        if turn is None:
            return False
        await timed_publish(
            ROBOT_STREAM,
            self.js.publish(
                ROBOT_SUBJECT,
                turn.SerializeToString(),
                headers={"Nats-Msg-Id": message_id(state.table_id, state.version)},
            ),
        )
        return True

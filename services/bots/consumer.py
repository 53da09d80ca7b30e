"""The bots service's side of the robots' work queue (issue 20).

Every replica binds one durable JetStream consumer with a queue group, so each robot's turn
goes to one replica; a message is acknowledged once its turn is played or found stale. A
replica that dies mid-thought leaves its message unacknowledged: it is redelivered to
another replica after :data:`ACK_WAIT_S` if the seat's clock still runs (else the table has
played the seat itself by then). A graceful stop hands the turns in progress back at once.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import Any, Final

from dominos.v1 import events_pb2

from services.bots import metrics
from services.bots.turns import TurnPlayer
from services.common.bus import (
    ROBOT_CONSUMER,
    ROBOT_STREAM,
    ROBOT_SUBJECT,
    bind_work_queue,
    ensure_robot_stream,
)
from services.common.connections import DEPENDENCY_ERRORS
from services.common.dependency_metrics import watch_consumer
from services.common.logging import get_logger
from services.common.tasks import BoundedTasks, stop_task

#: Turns a replica thinks about at once (each mostly waits: its think time).
MAX_CONCURRENT: Final = 1024
#: How long a delivered turn may stay unacknowledged before it goes to another replica.
ACK_WAIT_S: Final = 4.0
#: A turn that failed (the table service did not answer) is offered again after this delay.
RETRY_DELAY_S: Final = 0.5

log = get_logger(__name__)


class RobotTurnConsumer:
    """Feeds the robots' turns of the queue to a :class:`TurnPlayer`."""

    def __init__(
        self,
        player: TurnPlayer,
        nc: Any,
        *,
        stream_replicas: int = 1,
        on_outcome: Callable[[str], Any] | None = None,
    ) -> None:
        self.player = player
        self.nc = nc
        self.stream_replicas = stream_replicas
        self.on_outcome = on_outcome
        self._subscription: Any = None
        self._sampler: asyncio.Task[None] | None = None
        self._tasks = BoundedTasks(MAX_CONCURRENT)
        self._stopping = False

    async def start(self) -> None:
        """Bind the shared durable consumer (creating the stream if needed)."""
        js = self.nc.jetstream()
        await ensure_robot_stream(js, self.stream_replicas)
        self._subscription = await bind_work_queue(
            js,
            ROBOT_SUBJECT,
            ROBOT_STREAM,
            ROBOT_CONSUMER,
            self._on_message,
            ack_wait_s=ACK_WAIT_S,
            max_ack_pending=MAX_CONCURRENT * 4,
        )
        self._sampler = watch_consumer(
            self._subscription,
            ROBOT_STREAM,
            ROBOT_CONSUMER,
            on_error=DEPENDENCY_ERRORS.labels("nats").inc,
        )

    async def stop(self) -> None:
        """Stop taking turns; the turns in progress go back to the queue at once."""
        self._stopping = True
        await stop_task(self._sampler)
        if self._subscription is not None:
            with contextlib.suppress(Exception):
                await self._subscription.unsubscribe()
        self._tasks.cancel()
        await self._tasks.wait()

    async def _on_message(self, msg: Any) -> None:
        if self._stopping:
            with contextlib.suppress(Exception):
                await msg.nak()
            return
        await self._tasks.spawn(self._handle(msg))

    async def _handle(self, msg: Any) -> None:
        try:
            turn = events_pb2.RobotTurn.FromString(msg.data)
        except Exception:
            log.warning("bots.bad_message")
            await msg.term()
            return
        metrics.IN_PROGRESS.inc()
        try:
            outcome = await self.player.play(turn)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):
                await msg.nak()  # a graceful stop: another replica takes it now
            raise
        except Exception:
            log.exception("bots.turn_failed", table_id=turn.table_id, version=turn.version)
            outcome = "failed"
        finally:
            metrics.IN_PROGRESS.dec()
        metrics.TURNS.labels(outcome).inc()
        if self.on_outcome is not None:
            self.on_outcome(outcome)
        with contextlib.suppress(Exception):
            if outcome == "failed":
                await msg.nak(delay=RETRY_DELAY_S)
            else:
                await msg.ack()

"""What the table service lets out of itself about a table: on the bus (``TableEvent``) and
to gateways (``GetSnapshot``).

- **The state without its seed.** Gateways need every hand to project each seat's view
  (S6), but never the 128-bit deal seed: with it, anyone reading an event could compute the
  next rounds' hands before they are dealt. The seed lives only in the table service and in
  Redis; :func:`published_state` zeroes it.
- **Every seat's view in parts** (:class:`services.common.projection.ViewParts`): computed
  once per version with the one projection function (S6), so a gateway streams them as they
  are.
- **The seat holders**: per seat, a one-way value of the token that holds it
  (:func:`services.common.credentials.holder_tag`), or zeros for a seat nobody holds. A
  gateway binds each view stream to its token's value and ends the stream when the value of
  its seat changes: a stream never outlives its seat.

A seat is *held* while it has a player and the table is not closed by its host: when the
host leaves, the table closes and the host's token stops working (the guests' tokens still
read the closed table).
"""

from __future__ import annotations

from collections.abc import Callable

from dominos.v1 import events_pb2

from services.common import credentials
from services.common.projection import ViewParts
from services.rules import Phase, TableState, encode_state_unseeded
from services.rules.state import HOST_SEAT, SEATS


def published_state(state: TableState) -> bytes:
    """The engine's encoding of ``state`` with the deal seed zeroed."""
    return encode_state_unseeded(state)[1]


def is_held(state: TableState, seat: int) -> bool:
    """Whether ``seat``'s token works: the seat has a player, who is not a robot (a robot
    holds no token; a player whose seat a robot took for good holds it no more, issue 20),
    and it is not the host's seat of a table its host closed."""
    if not state.names[seat] or state.robots[seat]:
        return False
    return not (seat == HOST_SEAT and state.phase is Phase.CLOSED)


def seat_holders(state: TableState, digest_of: Callable[[int], bytes | None]) -> bytes:
    """The seat holders of ``state`` (:func:`credentials.seat_holders`); ``digest_of(seat)``
    gives the stored token digest of a seat."""
    return credentials.seat_holders(
        tuple(digest_of(seat) if is_held(state, seat) else None for seat in range(SEATS))
    )


def deadline_kind(state: TableState) -> int:
    """The kind of the table's running clock (``events.proto`` ``DeadlineKind``): a turn while
    playing, the break between rounds, none otherwise."""
    if state.phase is Phase.PLAYING:
        return int(events_pb2.DEADLINE_KIND_TURN)
    if state.phase is Phase.ROUND_OVER:
        return int(events_pb2.DEADLINE_KIND_BREAK)
    return int(events_pb2.DEADLINE_KIND_UNSPECIFIED)


def table_event(
    state: TableState,
    digest_of: Callable[[int], bytes | None],
    committed_at_ms: int,
    views: ViewParts,
    published: bytes | None = None,
) -> events_pb2.TableEvent:
    """The bus event of a committed version (see the module docstring); ``views`` are the
    :func:`~services.common.projection.view_parts` of ``state``, ``published`` its
    :func:`published_state` when the caller has it already."""
    return events_pb2.TableEvent(
        table_id=state.table_id,
        version=state.version,
        state=published_state(state) if published is None else published,
        seat_holders=seat_holders(state, digest_of),
        public_view=views.public,
        seat_views=views.seats,
        committed_at_ms=committed_at_ms,
        deadline_kind=deadline_kind(state),  # type: ignore[arg-type]
        deadline_ms=state.deadline_ms,
        turn_number=state.turn_number,
        phase=int(state.phase),  # type: ignore[arg-type]
    )

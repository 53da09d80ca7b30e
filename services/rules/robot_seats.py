"""Robots at a table (issue 20, D10): who holds a seat, and when a robot plays for a person.

Three ways a robot comes to play a seat, each only where the host chose it
(:class:`~.options.TableOptions`): seated at a practice table's creation; seated in an empty
seat when the host starts early; playing for a player who dropped (``stand_ins``) until the
player comes back, or for good once the return window passed. A seat a robot plays gets
the short clock (``Timing.away_ms``) as a fallback: the bots service acts well within it,
and should it be down the table auto-plays the seat as it does an away player's (R11, S3).
"""

from __future__ import annotations

from .events import Event, HandedOver, RobotSeated
from .names import skeleton
from .options import NO_ROBOT
from .state import NO_SEAT_VALUES, Phase, TableState


def robot_name(names: tuple[str, ...], seat: int) -> str:
    """The name of a robot seated in ``seat``: ``Robot N`` (N = seat + 1), or the next N
    whose name does not look like one already seated (so no person is mistaken for it)."""
    taken = {skeleton(name) for name in names if name}
    number = seat + 1
    while skeleton(f"Robot {number}") in taken:
        number += 1
    return f"Robot {number}"


def robot_plays(state: TableState, seat: int) -> bool:
    """Whether a robot plays ``seat`` now: it holds it, or stands in for its player."""
    return bool(state.robots[seat] or state.stand_ins[seat])


def person_there(state: TableState, seat: int) -> bool:
    """Whether ``seat``'s own player is there to play it (connected, no robot playing it):
    only then does its turn get the full clock."""
    return state.connected[seat] and not robot_plays(state, seat)


def humans(state: TableState) -> int:
    """The mask of the seats held by people (whether connected or not)."""
    mask = 0
    for seat in range(state.rules.seats):
        if state.names[seat] and not state.robots[seat]:
            mask |= 1 << seat
    return mask


def seat_robots(
    state: TableState, seats_levels: tuple[tuple[int, int], ...], *, named: bool = True
) -> tuple[TableState, tuple[Event, ...]]:
    """``state`` with a robot of each ``(seat, level)`` holding the seat (connected: a robot
    is always there; named ``Robot N`` unless ``named`` is False: a seat a robot keeps for
    its player keeps the player's name); the version is not changed (the caller's command
    does)."""
    names = list(state.names)
    robots = list(state.robots)
    connected = list(state.connected)
    events: list[Event] = []
    for seat, level in seats_levels:
        if named:
            names[seat] = robot_name(tuple(names), seat)
        robots[seat] = level
        connected[seat] = True
        events.append(RobotSeated(seat, level))
    seated = state._replace(
        names=tuple(names),  # type: ignore[arg-type]
        robots=tuple(robots),  # type: ignore[arg-type]
        connected=tuple(connected),  # type: ignore[arg-type]
    )
    return seated, tuple(events)


def fill_empty_seats(state: TableState) -> tuple[TableState, tuple[Event, ...]]:
    """At an early start: robots of the table's ``fill_level`` in every empty seat; nothing
    when the option is off (the caller then refuses the start)."""
    level = state.options.fill_level
    if level == NO_ROBOT:
        return state, ()
    empty = tuple((s, level) for s in range(state.rules.seats) if not state.names[s])
    return seat_robots(state, empty)


def hand_over(state: TableState, seat: int, now_ms: int) -> tuple[TableState, Event | None]:
    """When ``seat``'s player drops during the game at a table that replaces players: a robot
    of the table's ``replace_level`` plays for them until they return, at the latest
    ``return_ms`` from now. Otherwise ``state`` unchanged and no event."""
    level = state.options.replace_level
    live = state.phase in (Phase.PLAYING, Phase.ROUND_OVER)
    if level == NO_ROBOT or not live or state.robots[seat] or state.stand_ins[seat]:
        return state, None
    until = now_ms + state.options.return_ms
    stand_ins = list(state.stand_ins)
    stand_ins[seat] = until
    return state._replace(stand_ins=tuple(stand_ins)), HandedOver(seat, level, until)  # type: ignore[arg-type]


def hand_back(state: TableState, seat: int) -> TableState:
    """``seat``'s player came back in time: the robot standing in for them stops."""
    if not state.stand_ins[seat]:
        return state
    stand_ins = list(state.stand_ins)
    stand_ins[seat] = 0
    return state._replace(stand_ins=tuple(stand_ins))  # type: ignore[arg-type]


def settle(state: TableState, now_ms: int) -> tuple[TableState, tuple[Event, ...]]:
    """The seats whose return window passed by ``now_ms`` given to their robot for good
    (the player's name stays on the seat, the player's token stops working); ``state``
    itself when none did. The version is not changed (the caller's command does)."""
    if state.stand_ins == NO_SEAT_VALUES:
        return state, ()
    due = tuple(s for s, until in enumerate(state.stand_ins) if until and now_ms >= until)
    if not due:
        return state, ()
    stand_ins = tuple(0 if s in due else until for s, until in enumerate(state.stand_ins))
    level = state.options.replace_level
    return seat_robots(
        state._replace(stand_ins=stand_ins),  # type: ignore[arg-type]
        tuple((seat, level) for seat in due),
        named=False,
    )

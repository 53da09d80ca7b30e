"""Serialisation of states to compact bytes, and back, exactly.

A binary layout (format 2): a format byte, then every field in a fixed order as single bytes,
unsigned LEB128 varints, length-prefixed UTF-8 and the 16-byte seed; a table in play is 115
to 144 bytes (median 131, measured over 1,619 states of 30 games). ``decode_state(
encode_state(s)) == s`` for every reachable state, enums and tuples included; anything else
raises ``CodecError``. (Commands are stored by the table service's command log.)

Rule sets (issue 19): a table of the classic rule set is still written in format 2, byte
for byte as before, and every format-2 state decodes to ``CLASSIC``. Any other rule set is
written in format 3: format 2's fields with the rule set (``encode_rules``) after the format
byte, one score per side (count-prefixed), the round's stock (count-prefixed tiles in draw
order), set-aside mask, lead tile and per-seat draw counts after its last layer, and the
round result's scoring side stored +1 (``NOBODY`` = 0) with count-prefixed side pips.
``encode_rules``/``decode_rules`` also serve the command log's ``Create`` entries.

All fives (``Scoring.ALL_FIVES``, format 3 only): after the draw counts the round has its
layout's center index stored +1 and the spinner's short sides (count-prefixed codes, up
then down), the round result its unrounded points (a varint after the hands) and a
``TileLaid`` last action its points (a varint after ``auto``). Every other rule set's
bytes are unchanged, so every state stored before all fives was playable still decodes.

Table options (issue 20): a table whose host chose options (robots, the friendly end, the
count aid) is written in format 4: format 3's fields (the rule set included, classic too)
and then the options, the robot level of each seat, each seat's stand-in deadline, the open
vote, the unscored flag and the round's proposals. A table without options never reaches
format 4 (robots and votes need options), so every earlier state keeps its bytes.
"""

from __future__ import annotations

from typing import Any, Final

from .binary import DecodeError, Reader, text, varint
from .events import (
    Drew,
    EndAnswered,
    EndProposed,
    Event,
    HandedOver,
    Passed,
    PresenceChanged,
    RobotSeated,
    RoundDealt,
    SeatFreed,
    SeatTaken,
    TableClosed,
    TableCreated,
    TargetChanged,
    TileLaid,
    VoteClosed,
)
from .options import NO_OPTIONS, TableOptions
from .rulesets import (
    CLASSIC,
    BlockedScore,
    BlockedTie,
    DominoScore,
    NextOpener,
    Opener,
    RuleSet,
    Scoring,
)
from .state import (
    NO_SEAT_VALUES,
    AutoCause,
    Outcome,
    Phase,
    RoundResult,
    RoundState,
    TableState,
    Timing,
    Vote,
    VoteOutcome,
)

STATE_FORMAT: Final = 2
#: The format of states of any rule set other than classic.
RULES_STATE_FORMAT: Final = 3
#: The format of states of a table with options (issue 20).
OPTIONS_STATE_FORMAT: Final = 4


class CodecError(DecodeError):
    """Bytes that are not an encoded state or command of a known format."""


_ACTION_TYPES: Final[tuple[type, ...]] = (
    TableCreated,
    SeatTaken,
    SeatFreed,
    TableClosed,
    TargetChanged,
    RoundDealt,
    TileLaid,
    Passed,
    PresenceChanged,
    Drew,
    RobotSeated,
    HandedOver,
    EndProposed,
    EndAnswered,
    VoteClosed,
)
_ACTION_CODES: Final[dict[type, int]] = {cls: i for i, cls in enumerate(_ACTION_TYPES)}
#: Event fields holding text; every other field is a non-negative integer.
_TEXT_FIELDS: Final = frozenset({"name", "host_name"})


def _action_fields(cls: Any, fives: bool) -> tuple[str, ...]:
    """The fields of an action written: a ``TileLaid``'s points only under all fives."""
    fields: tuple[str, ...] = cls._fields
    if cls is TileLaid and not fives:
        return fields[:-1]
    return fields


def _encode_action(event: Event, fives: bool = False) -> bytes:
    kind = _ACTION_CODES.get(type(event))
    if kind is None:
        raise CodecError(f"{type(event).__name__} is not a last action")
    if not fives and type(event) is TileLaid and event.points:
        raise CodecError("points scored by a play outside all fives")
    out = bytearray((kind,))
    if type(event) is VoteClosed:  # its seat may be NOBODY
        return bytes((kind, int(event.outcome), _opt(event.seat)))
    for name in _action_fields(type(event), fives):
        value: Any = getattr(event, name)
        out += text(value) if name in _TEXT_FIELDS else varint(int(value))
    return bytes(out)


def _decode_action(r: Reader, fives: bool = False) -> Event:
    code = r.byte()
    if code >= len(_ACTION_TYPES):
        raise CodecError(f"unknown action {code}")
    cls: Any = _ACTION_TYPES[code]
    if cls is VoteClosed:
        return VoteClosed(VoteOutcome(r.byte()), r.byte() - 1)
    names = _action_fields(cls, fives)
    fields: list[Any] = [r.text() if name in _TEXT_FIELDS else r.varint() for name in names]
    if cls in (Passed, Drew):
        fields[-1] = AutoCause(fields[-1])
    if cls is TileLaid:
        fields[3] = AutoCause(fields[3])
    if cls in (PresenceChanged, EndAnswered):
        fields[-1] = bool(fields[-1])
    event: Event = cls(*fields)
    return event


def _opt(value: int) -> int:
    return value + 1  # NOBODY (-1) is stored as 0


def encode_rules(rules: RuleSet) -> bytes:
    """A rule set as bytes: its preset name, its choices (one byte each), target and turn
    ranges (varints) and its layouts (count, then three bytes each)."""
    out = bytearray(text(rules.preset))
    out += bytes(
        (
            rules.seats,
            int(rules.teams),
            rules.hand_size,
            int(rules.draw),
            rules.set_aside,
            int(rules.opener),
            int(rules.next_opener),
            int(rules.domino_score),
            int(rules.blocked_score),
            int(rules.blocked_tie),
            int(rules.scoring),
        )
    )
    for value in (
        rules.target,
        rules.min_target,
        rules.max_target,
        rules.target_step,
        rules.turn_seconds,
        rules.min_turn_seconds,
        rules.max_turn_seconds,
    ):
        out += varint(value)
    out.append(len(rules.layouts))
    for seats, hand_size, teams in rules.layouts:
        out += bytes((seats, hand_size, int(teams)))
    return bytes(out)


def _read_rules(r: Reader) -> RuleSet:
    name = r.text()
    seats, teams, hand, draw, aside = (r.byte() for _ in range(5))
    opener, nxt, domino, blocked, tie, scoring = (r.byte() for _ in range(6))
    target, low, high, step, turn, turn_low, turn_high = (r.varint() for _ in range(7))
    layouts = tuple((r.byte(), r.byte(), bool(r.byte())) for _ in range(r.byte()))
    return RuleSet(
        preset=name,
        seats=seats,
        teams=bool(teams),
        hand_size=hand,
        draw=bool(draw),
        set_aside=aside,
        opener=Opener(opener),
        next_opener=NextOpener(nxt),
        domino_score=DominoScore(domino),
        blocked_score=BlockedScore(blocked),
        blocked_tie=BlockedTie(tie),
        scoring=Scoring(scoring),
        target=target,
        min_target=low,
        max_target=high,
        target_step=step,
        turn_seconds=turn,
        min_turn_seconds=turn_low,
        max_turn_seconds=turn_high,
        layouts=layouts,
    )


def decode_rules(data: bytes) -> RuleSet:
    """The rule set ``encode_rules`` wrote; ``CodecError`` for anything else."""
    r = Reader(bytes(data), CodecError)
    try:
        rules = _read_rules(r)
    except (ValueError, TypeError) as exc:
        raise CodecError(f"not an encoded rule set: {exc}") from exc
    if not r.at_end:
        raise CodecError("trailing bytes after a rule set")
    return rules


def _ints(values: tuple[int, ...]) -> bytes:
    return bytes((len(values),)) + b"".join(varint(v) for v in values)


def _encode_round(rnd: RoundState, ext: bool, fives: bool = False) -> bytes:
    out = bytearray((1,))
    out += varint(rnd.number)
    out.append(rnd.opener)
    for hand in rnd.hands:
        out += varint(hand)
    out.append(len(rnd.chain))
    out += bytes(rnd.chain)
    out += bytes((rnd.left, rnd.right, rnd.turn, rnd.passes, *rnd.passed))
    out.append(_opt(rnd.last_layer))
    if ext:
        out.append(len(rnd.stock))
        out += bytes(rnd.stock)
        out += varint(rnd.aside)
        out.append(_opt(rnd.lead))
        out += bytes(rnd.drawn)
    if fives:
        out.append(_opt(rnd.center))
        for arm in (rnd.up, rnd.down):
            out.append(len(arm))
            out += bytes(arm)
    return bytes(out)


def _encode_result(res: RoundResult, ext: bool, fives: bool = False) -> bytes:
    out = bytearray((1,))
    out += varint(res.number)
    out += bytes((res.opener, int(res.outcome)))
    out.append(_opt(res.scoring_team) if ext else res.scoring_team)
    out += varint(res.points)
    out.append(_opt(res.domino_seat))
    out += _ints(res.team_pips) if ext else varint(res.team_pips[0]) + varint(res.team_pips[1])
    out.append(_opt(res.last_tile_team))
    for hand in res.hands:
        out += varint(hand)
    if fives:
        out += varint(res.unrounded_points)
    return bytes(out)


def _has_options(state: TableState) -> bool:
    return (
        state.options != NO_OPTIONS
        or state.robots != NO_SEAT_VALUES
        or state.stand_ins != NO_SEAT_VALUES
        or state.vote is not None
        or state.unscored
        or state.proposals != (0, 0)
    )


def encode_options(options: TableOptions) -> bytes:
    """Table options as bytes: the practice levels (count-prefixed), the fill and replace
    levels, the return window (varint ms), the friendly end, the vote time (varint ms) and
    the count aid (one byte each otherwise). Also the command log's option entries."""
    out = bytearray((len(options.practice), *options.practice))
    out += bytes((options.fill_level, options.replace_level))
    out += varint(options.return_ms)
    out.append(int(options.friendly_end))
    out += varint(options.vote_ms)
    out.append(int(options.count_aid))
    return bytes(out)


def _read_table_options(r: Reader) -> TableOptions:
    practice = tuple(r.byte() for _ in range(r.byte()))
    fill, replace = r.byte(), r.byte()
    return_ms = r.varint()
    friendly = bool(r.byte())
    vote_ms = r.varint()
    aid = bool(r.byte())
    return TableOptions(practice, fill, replace, return_ms, friendly, vote_ms, aid)


def decode_options(data: bytes) -> TableOptions:
    """The options ``encode_options`` wrote; ``CodecError`` for anything else."""
    r = Reader(bytes(data), CodecError)
    options = _read_table_options(r)
    if not r.at_end:
        raise CodecError("trailing bytes after table options")
    return options


def _encode_options(state: TableState) -> bytes:
    out = bytearray(encode_options(state.options))
    out += bytes(state.robots)
    for until in state.stand_ins:
        out += varint(until)
    vote = state.vote
    if vote is None:
        out.append(0)
    else:
        out += bytes((1, vote.proposer, vote.accepted))
        out += varint(vote.deadline_ms) + varint(vote.paused_ms)
    out.append(int(state.unscored))
    out += varint(state.proposals[0]) + bytes((state.proposals[1],))
    return bytes(out)


def _read_options(r: Reader) -> dict[str, Any]:
    options = _read_table_options(r)
    robots = (r.byte(), r.byte(), r.byte(), r.byte())
    stand_ins = (r.varint(), r.varint(), r.varint(), r.varint())
    vote = None
    if r.byte():
        proposer, accepted = r.byte(), r.byte()
        vote = Vote(proposer, accepted, r.varint(), r.varint())
    return {
        "options": options,
        "robots": NO_SEAT_VALUES if robots == NO_SEAT_VALUES else robots,
        "stand_ins": NO_SEAT_VALUES if stand_ins == NO_SEAT_VALUES else stand_ins,
        "vote": vote,
        "unscored": bool(r.byte()),
        "proposals": (r.varint(), r.byte()),
    }


def encode_state(state: TableState) -> bytes:
    """The state as compact bytes (see the module docstring)."""
    return bytes(_encode(state)[0])


def encode_state_unseeded(state: TableState) -> tuple[bytes, bytes]:
    """``(encode_state(state), encode_state(state with seed 0))`` from one encoding: the
    state as stored and as it may be shown outside (the seed is 16 bytes at a known place)."""
    out, seed_at = _encode(state)
    stored = bytes(out)
    if not state.seed:
        return stored, stored
    out[seed_at : seed_at + 16] = bytes(16)
    return stored, bytes(out)


def _encode(state: TableState) -> tuple[bytearray, int]:
    """The encoding of ``state`` and where its seed starts in it."""
    rules = state.rules
    optioned = _has_options(state)
    ext = optioned or (rules is not CLASSIC and rules != CLASSIC)
    fives = rules.scoring is Scoring.ALL_FIVES
    fmt = OPTIONS_STATE_FORMAT if optioned else RULES_STATE_FORMAT if ext else STATE_FORMAT
    out = bytearray((fmt,))
    if ext:
        out += encode_rules(rules)
    out += text(state.table_id)
    out += varint(state.version)
    out.append(int(state.phase))
    out += varint(state.target)
    for name in state.names:
        out += text(name)
    out.append(sum(1 << i for i, c in enumerate(state.connected) if c))
    seed_at = len(out)
    out += state.seed.to_bytes(16, "big")
    for value in state.timing:
        out += varint(value)
    out += _ints(state.scores) if ext else varint(state.scores[0]) + varint(state.scores[1])
    out += b"\0" if state.round is None else _encode_round(state.round, ext, fives)
    out += b"\0" if state.last_result is None else _encode_result(state.last_result, ext, fives)
    out += varint(state.turn_number)
    out += varint(state.deadline_ms)
    out.append(_opt(state.winner))
    out += _encode_action(state.last_action, fives)
    if optioned:
        out += _encode_options(state)
    return out, seed_at


def _read_ints(r: Reader, ext: bool) -> tuple[int, ...]:
    if ext:
        return tuple(r.varint() for _ in range(r.byte()))
    return (r.varint(), r.varint())


def _read_round(r: Reader, ext: bool, fives: bool = False) -> RoundState | None:
    if not r.byte():
        return None
    number, opener = r.varint(), r.byte()
    hands = (r.varint(), r.varint(), r.varint(), r.varint())
    chain = tuple(r.raw(r.byte()))
    left, right, turn, passes = r.byte(), r.byte(), r.byte(), r.byte()
    passed = (r.byte(), r.byte(), r.byte(), r.byte())
    last = r.byte() - 1
    rnd = RoundState(number, opener, hands, chain, left, right, turn, passes, passed, last)
    if ext:
        stock = tuple(r.raw(r.byte()))
        aside, lead = r.varint(), r.byte() - 1
        drawn = (r.byte(), r.byte(), r.byte(), r.byte())
        rnd = rnd._replace(stock=stock, aside=aside, lead=lead, drawn=drawn)
    if fives:
        center = r.byte() - 1
        up, down = tuple(r.raw(r.byte())), tuple(r.raw(r.byte()))
        rnd = rnd._replace(center=center, up=up, down=down)
    return rnd


def _read_result(r: Reader, ext: bool, fives: bool = False) -> RoundResult | None:
    if not r.byte():
        return None
    number = r.varint()
    opener, outcome = r.byte(), Outcome(r.byte())
    scorer = r.byte() - 1 if ext else r.byte()
    points, domino = r.varint(), r.byte() - 1
    pips = _read_ints(r, ext)
    last_team = r.byte() - 1
    hands = (r.varint(), r.varint(), r.varint(), r.varint())
    unrounded = r.varint() if fives else 0
    return RoundResult(
        number, opener, outcome, scorer, points, domino, pips, last_team, hands, unrounded
    )


def _read_state(r: Reader) -> TableState:
    fmt = r.byte()
    if fmt not in (STATE_FORMAT, RULES_STATE_FORMAT, OPTIONS_STATE_FORMAT):
        raise CodecError(f"unknown state format {fmt!r}")
    ext = fmt != STATE_FORMAT
    rules = _read_rules(r) if ext else CLASSIC
    if rules == CLASSIC:
        rules = CLASSIC  # a classic table with options (format 4)
    fives = rules.scoring is Scoring.ALL_FIVES
    table_id = r.text()
    version = r.varint()
    phase = Phase(r.byte())
    target = r.varint()
    names = (r.text(), r.text(), r.text(), r.text())
    bits = r.byte()
    connected = (bool(bits & 1), bool(bits & 2), bool(bits & 4), bool(bits & 8))
    seed = int.from_bytes(r.raw(16), "big")
    timing = Timing(r.varint(), r.varint(), r.varint())
    scores = _read_ints(r, ext)
    rnd = _read_round(r, ext, fives)
    result = _read_result(r, ext, fives)
    turn_number, deadline_ms, winner = r.varint(), r.varint(), r.byte() - 1
    action = _decode_action(r, fives)
    extra = _read_options(r) if fmt == OPTIONS_STATE_FORMAT else {}
    return TableState(
        table_id=table_id,
        version=version,
        phase=phase,
        target=target,
        names=names,
        connected=connected,
        seed=seed,
        timing=timing,
        scores=scores,
        round=rnd,
        last_result=result,
        turn_number=turn_number,
        deadline_ms=deadline_ms,
        winner=winner,
        last_action=action,
        rules=rules,
        **extra,
    )


def decode_state(data: bytes) -> TableState:
    """The state ``encode_state`` wrote; ``CodecError`` for anything else."""
    r = Reader(bytes(data), CodecError)
    try:
        state = _read_state(r)
        if not r.at_end:
            raise CodecError("trailing bytes after a state")
    except CodecError:
        raise
    except (ValueError, TypeError, IndexError, KeyError) as exc:
        raise CodecError(f"not an encoded table state: {exc}") from exc
    return state

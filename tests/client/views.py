"""Crafted table views shared by the client's tests: a four-seat view for the word tests
(:func:`make_view`, :func:`summary_view`), the views the app is shown without a cluster
(:func:`crafted`) and the 80 x 24 screens' views with long names (:func:`view_of`,
:func:`crowded`, :func:`finished`); and the pattern of a rule id, never shown on screen."""

from __future__ import annotations

import re

from dominos.v1 import game_pb2

from services.client.api import SeatCredentials

RULE_ID = re.compile(r"\([RSD]\d+\)")

NAMES = ("Ann", "Bob", "Cid", "Dee")

SMALL = (80, 24)

LONG_NAMES = ("Ana", "Benoît-Alexandre Dupont", "Chloé-Marguerite", "Éric de la Fontaine")

TABLE_WIDGETS = (
    "header", "north", "west", "east", "chain", "ends", "south", "hand", "turn", "pass",
    "message", "last-action", "keys",
)  # fmt: skip

SEAT = SeatCredentials("t" * 22, 0, "token")


def make_view(**fields: object) -> game_pb2.TableView:
    """A four-seat view for seat 0 (Ann, host) in PHASE_PLAYING, with ``fields`` set."""
    view = game_pb2.TableView(
        table_id="t1",
        version=7,
        phase=game_pb2.PHASE_PLAYING,
        target=150,
        your_seat=0,
        round_number=2,
        opener_seat=1,
    )
    for seat, name in enumerate(NAMES):
        view.seats.add(
            seat=seat,
            occupied=True,
            name=name,
            team=game_pb2.TEAM_A if seat % 2 == 0 else game_pb2.TEAM_B,
            host=seat == 0,
            tile_count=5,
            connected=True,
        )
    for name, value in fields.items():
        if name == "passes":
            for seat, numbers in value.items():  # type: ignore[attr-defined]
                view.seats[seat].passed_on.extend(numbers)
        else:
            setattr(view, name, value)
    return view


def summary_view(
    outcome: int, scoring: int, points: int, a_pips: int, b_pips: int, **extra: object
) -> game_pb2.TableView:
    view = make_view(phase=game_pb2.PHASE_ROUND_OVER, score_team_a=40, score_team_b=25)
    view.last_round.CopyFrom(
        game_pb2.RoundSummary(
            round_number=2,
            outcome=outcome,  # type: ignore[arg-type]
            scoring_team=scoring,  # type: ignore[arg-type]
            points=points,
            team_a_pips=a_pips,
            team_b_pips=b_pips,
            tie_rule_applied=outcome == game_pb2.ROUND_OUTCOME_BLOCKED_TIE,
            opener_seat=1,
            **extra,  # type: ignore[arg-type]
        )
    )
    return view


def crafted(phase: int, **fields: object) -> game_pb2.TableView:
    view = game_pb2.TableView(
        table_id="t",
        version=3,
        phase=phase,  # type: ignore[arg-type]
        target=100,
        your_seat=0,
        round_number=4,
        opener_seat=3,
        server_time_ms=1_000_000,
        turn_deadline_ms=1_012_000,
    )
    for seat, name in enumerate(("Ann", "Bob", "Cid", "Dee")):
        view.seats.add(
            seat=seat, occupied=True, name=name, host=seat == 0, tile_count=3, connected=True
        )
    for name, value in fields.items():
        setattr(view, name, value)
    return view


def view_of(phase: int, your_seat: int = 0, **fields: object) -> game_pb2.TableView:
    view = game_pb2.TableView(
        table_id="t",
        version=fields.pop("version", 3),  # type: ignore[arg-type]
        phase=phase,  # type: ignore[arg-type]
        target=500,
        your_seat=your_seat,
        round_number=12,
        opener_seat=3,
        server_time_ms=1_000_000,
        turn_deadline_ms=1_030_000,
        score_team_a=485,
        score_team_b=470,
    )
    for seat, name in enumerate(LONG_NAMES):
        view.seats.add(
            seat=seat, occupied=True, name=name, host=seat == 0, tile_count=7, connected=True
        )
    for name, value in fields.items():
        setattr(view, name, value)
    return view


def crowded(turn_seat: int = 0, version: int = 3) -> game_pb2.TableView:
    """A long chain with every double, a full hand, passes on every side, someone away."""
    view = view_of(game_pb2.PHASE_PLAYING, turn_seat=turn_seat, version=version)
    chain = [
        (5, 5), (5, 3), (3, 3), (3, 6), (6, 6), (6, 1), (1, 1), (1, 4), (4, 4), (4, 2),
        (2, 2), (2, 0), (0, 0), (0, 6), (6, 5), (5, 1), (1, 3), (3, 4), (4, 6), (6, 2), (2, 5),
    ]  # fmt: skip
    for left, right in chain:
        view.chain.add(left=left, right=right, seat=1)
    view.left_end, view.right_end = 5, 5
    for low, high in ((0, 1), (0, 2), (1, 2), (3, 5), (4, 5), (0, 3), (2, 6)):
        view.hand.add(low=low, high=high)
    if turn_seat == 0:
        view.legal_moves.add(tile=game_pb2.Tile(low=3, high=5), end=game_pb2.END_LEFT)
        view.legal_moves.add(tile=game_pb2.Tile(low=4, high=5), end=game_pb2.END_RIGHT)
    for seat, numbers in ((1, [2, 4, 5, 6]), (2, [1, 3, 6]), (3, [0, 1, 2, 3, 4])):
        view.seats[seat].passed_on.extend(numbers)
        view.seats[seat].tile_count = 3
    view.seats[3].connected = False
    view.last_action.kind = game_pb2.ACTION_KIND_PLAYED
    view.last_action.seat = 3
    view.last_action.auto_play = game_pb2.AUTO_PLAY_CAUSE_AWAY
    view.last_action.move.tile.low, view.last_action.move.tile.high = 2, 5
    view.last_action.move.end = game_pb2.END_RIGHT
    return view


def finished(version: int = 9) -> game_pb2.TableView:
    view = view_of(game_pb2.PHASE_FINISHED, version=version, winner=game_pb2.TEAM_A)
    view.score_team_a = 512
    lost = [(4, 6), (5, 6), (1, 5)]
    hands = [
        game_pb2.RevealedHand(
            seat=s,
            points=27 if s % 2 else 0,
            tiles=[game_pb2.Tile(low=a, high=b) for a, b in lost] if s % 2 else [],
        )
        for s in range(4)
    ]
    view.last_round.CopyFrom(
        game_pb2.RoundSummary(
            round_number=12,
            outcome=game_pb2.ROUND_OUTCOME_DOMINO,
            scoring_team=game_pb2.TEAM_A,
            points=27,
            domino_seat=2,
            opener_seat=3,
            hands=hands,
        )
    )
    return view


def rules_of(name: str, **choice: object) -> game_pb2.RuleSet:
    """The contract's ``RuleSet`` of the preset ``name`` as the server builds it, adjusted
    (``seats``, ``hand_size``, ``teams``, ``turn_seconds``)."""
    from services.common.projection import rules_message  # noqa: PLC0415
    from services.rules.rulesets import preset  # noqa: PLC0415

    return rules_message(preset(name, **choice))  # type: ignore[arg-type]


def ruled_view(
    name: str,
    seats: int,
    phase: int = game_pb2.PHASE_PLAYING,
    names: tuple[str, ...] = NAMES,
    **choice: object,
) -> game_pb2.TableView:
    """A view for seat 0 of a table playing preset ``name`` at ``seats`` seats (each for
    themselves unless ``teams``), round 3, with scores 12, 30, 5, 41 by side."""
    rules = rules_of(name, seats=seats, **choice)
    view = game_pb2.TableView(
        table_id="t",
        version=7,
        phase=phase,  # type: ignore[arg-type]
        target=100,
        your_seat=0,
        round_number=3,
        opener_seat=1,
        server_time_ms=1_000_000,
        turn_deadline_ms=1_030_000,
        rules=rules,
        stock_size=6 if rules.draw else 0,
    )
    sides = 2 if rules.teams else seats
    view.side_scores.extend([12, 30, 5, 41][:sides])
    if rules.teams:
        view.score_team_a, view.score_team_b = 12, 30
    for seat in range(seats):
        side = seat % 2 if rules.teams else seat
        view.seats.add(
            seat=seat,
            occupied=True,
            name=names[seat],
            host=seat == 0,
            tile_count=4,
            connected=True,
            team=(game_pb2.TEAM_A if seat % 2 == 0 else game_pb2.TEAM_B) if rules.teams else 0,
            side=side,
            score=view.side_scores[side],
        )
    return view


def ruled_summary(
    view: game_pb2.TableView,
    outcome: int,
    points: int,
    pips: list[int],
    scoring_side: int | None,
    domino_seat: int | None = None,
) -> game_pb2.TableView:
    """``view`` between rounds with a summary of round 3: ``pips`` per seat (their sums per
    side with teams)."""
    view.phase = game_pb2.PHASE_ROUND_OVER
    seats = len(view.seats)
    summary = game_pb2.RoundSummary(
        round_number=3,
        outcome=outcome,  # type: ignore[arg-type]
        points=points,
        opener_seat=1,
        tie_rule_applied=outcome == game_pb2.ROUND_OUTCOME_BLOCKED_TIE,
        hands=[game_pb2.RevealedHand(seat=s, points=pips[s]) for s in range(seats)],
    )
    if view.rules.teams:
        summary.side_pips.extend([pips[0] + pips[2], pips[1] + pips[3]])
    else:
        summary.side_pips.extend(pips)
    if scoring_side is not None:
        summary.scoring_side = scoring_side
        if view.rules.teams:
            summary.scoring_team = game_pb2.TEAM_A if scoring_side == 0 else game_pb2.TEAM_B
    if domino_seat is not None:
        summary.domino_seat = domino_seat
    view.last_round.CopyFrom(summary)
    return view


#: A fives table's long line (left to right, the spinner 5-5 at index 4) and its short sides
#: from the spinner out: four open ends, left 2, right 1, top 4, bottom 6 (total 2 + 1 + 4 +
#: 6 = 13).
FIVES_CHAIN = (
    (2, 3),
    (3, 3),
    (3, 6),
    (6, 5),
    (5, 5),
    (5, 4),
    (4, 4),
    (4, 1),
    (1, 1),
    (1, 2),
    (2, 1),
)
FIVES_UP = ((5, 2), (2, 4))
FIVES_DOWN = ((5, 0), (0, 0), (0, 6))


def fives_view(
    seats: int = 4, names: tuple[str, ...] = LONG_NAMES, turn_seat: int = 0
) -> game_pb2.TableView:
    """A ``web_fives`` table mid-round with the spinner and its four open ends, a full hand
    whose tiles fit several ends (some scoring), the last play scored 15."""
    view = ruled_view("web_fives", seats, names=names)
    view.turn_seat = turn_seat
    for left, right in FIVES_CHAIN:
        view.chain.add(left=left, right=right, seat=1)
    view.spinner_index = 4
    for arm, tiles in ((view.up_arm, FIVES_UP), (view.down_arm, FIVES_DOWN)):
        for left, right in tiles:
            arm.add(left=left, right=right, seat=1)
    view.left_end, view.right_end = 2, 1
    for end, number in (
        (game_pb2.END_LEFT, 2), (game_pb2.END_RIGHT, 1), (game_pb2.END_UP, 4),
        (game_pb2.END_DOWN, 6),
    ):  # fmt: skip
        view.open_ends.add(end=end, number=number)
    for low, high in ((0, 2), (1, 6), (2, 4), (2, 6), (3, 4), (0, 4), (4, 6)):
        view.hand.add(low=low, high=high)
    if turn_seat == view.your_seat:
        for low, high, end, points in (
            (0, 2, game_pb2.END_LEFT, 0), (1, 6, game_pb2.END_RIGHT, 0),
            (1, 6, game_pb2.END_DOWN, 10), (2, 4, game_pb2.END_UP, 0),
            (2, 4, game_pb2.END_LEFT, 15), (2, 6, game_pb2.END_LEFT, 0),
            (2, 6, game_pb2.END_DOWN, 0), (4, 6, game_pb2.END_UP, 15),
        ):  # fmt: skip
            view.legal_moves.add(tile=game_pb2.Tile(low=low, high=high), end=end, points=points)
    for seat in range(seats):
        view.seats[seat].tile_count = 7 if seat == 0 else 3
    view.last_action.kind = game_pb2.ACTION_KIND_PLAYED
    view.last_action.seat = seats - 1
    view.last_action.points = 15
    view.last_action.move.tile.low, view.last_action.move.tile.high = 0, 6
    view.last_action.move.end = game_pb2.END_DOWN
    return view

"""The one projection of a table onto a seat (S6)."""

from __future__ import annotations

from services.rules import NOBODY, Pass, Phase, Start, apply, legal_moves, view_for
from services.rules.options import TableOptions
from services.rules.state import End
from services.rules.tiles import tile_index, tiles_of

from .builders import NOW, in_play, lobby
from .option_builders import WEB_DRAW_2, started


def test_s6_a_seat_sees_its_own_hand_and_only_counts_of_the_others() -> None:
    state = apply(lobby(), Start(0, 3), NOW).state
    assert state.round is not None
    for seat in range(4):
        view = view_for(state, seat)
        assert view.hand == tuple(tiles_of(state.round.hands[seat]))
        assert [s.tile_count for s in view.seats] == [7, 7, 7, 7]
        assert view.your_seat == seat


def test_s6_the_public_state_is_the_same_for_every_seat() -> None:
    state = in_play(("2-5 1-1", "0-0 6-6", "0-1", "0-2"), left=5, right=3, turn=0)
    views = [view_for(state, s) for s in range(4)]
    public = {
        (v.version, v.phase, v.target, v.scores, v.seats, v.turn_seat, v.deadline_ms, v.chain)
        for v in views
    }
    assert len(public) == 1


def test_s6_only_the_seat_to_play_gets_moves() -> None:
    state = in_play(("2-5 1-1", "0-0 5-6", "0-1", "0-2"), left=5, right=3, turn=0)
    assert [(m.tile, m.end) for m in view_for(state, 0).legal_moves] == [
        (tile_index(2, 5), int(End.LEFT))
    ]
    assert view_for(state, 1).legal_moves == ()
    assert view_for(state, 0).can_pass is False


def test_d1_the_round_summary_reveals_the_hands_only_once_the_round_is_over() -> None:
    state = in_play(("1-1", "3-3", "2-2", "0-1"), left=5, right=6, turn=0, last_layer=3)
    assert view_for(state, 0).last_round is None
    for seat in range(4):
        state = apply(state, Pass(seat), NOW).state
    assert state.phase is Phase.ROUND_OVER
    summary = view_for(state, 2).last_round
    assert summary is not None
    assert summary.hands[1] == 1 << tile_index(3, 3)
    assert view_for(state, 2).turn_seat == NOBODY
    assert view_for(state, 2).deadline_ms == state.deadline_ms  # the break's end (D1)


def test_the_lobby_view_lists_free_seats_and_the_host() -> None:
    view = view_for(lobby(2), 1)
    assert [s.occupied for s in view.seats] == [True, True, False, False]
    assert [s.host for s in view.seats] == [True, False, False, False]
    assert view.hand == () and view.round_number == 0 and view.turn_seat == NOBODY


def test_the_count_aid_shows_how_many_laid_tiles_carry_each_number_seed_004() -> None:
    state = started(WEB_DRAW_2, TableOptions(count_aid=True), humans=2)
    assert view_for(state, 0).laid_per_number == (0,) * 7
    for _ in range(3):
        assert state.round is not None
        moves = legal_moves(state, state.round.turn)
        if not moves:
            break
        state = apply(state, moves[-1], 2_000_000).state
    assert state.round is not None
    laid = [0] * 7
    for code in state.round.chain:
        low, high = sorted((code >> 3 & 7, code & 7))
        laid[low] += 1
        if high != low:
            laid[high] += 1
    assert view_for(state, 1).laid_per_number == tuple(laid)
    plain = started(WEB_DRAW_2, TableOptions(), humans=2)
    assert view_for(plain, 0).laid_per_number == ()

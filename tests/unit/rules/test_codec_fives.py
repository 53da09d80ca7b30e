# mypy: disable-error-code="union-attr"
"""The codec under all fives, and stored format-3 states of the other rule sets (issue 19):
bytes written before all fives was playable still decode, to the same state, and encode
back to exactly those bytes; an all-fives state keeps its spinner, the points of its last
play and its round's unrounded points."""

from __future__ import annotations

import pytest

from services.rules import (
    AutoCause,
    CodecError,
    Phase,
    Play,
    apply,
    decode_state,
    encode_state,
)
from services.rules.events import TileLaid
from services.rules.rulesets import Scoring, preset

from .builders import NOW, tiles
from .rule_builders import playing

#: States of three other rule sets written by the engine before all fives was playable
#: (format 3): web_draw at three seats mid-round, site in teams mid-round (a tile just
#: laid), web_block at two seats when its first round was over.
STORED_BEFORE_ALL_FIVES = {
    "web_draw": bytes.fromhex(
        "03087765625f6472617703000501000203010202016432f403322d2d2d0302070003050004050008636f"
        "6d7061742d332c026403416e610342656e0643686c6fc3a900000123456789abcdef0123456789abcdef"
        "c8df028827904e0300291e01030182849220808a288080811d0001430003020000000000020d050c0016"
        "0d0b1014070604021b0000000000000029c0970d000601030102"
    ),
    "site": bytes.fromhex(
        "03047369746504010701000101020103016432ac02322d0f780402070003070004070104070008636f6d"
        "7061742d3332026403416e610342656e0643686c6fc3a90644c3a964c3a9000000000000000000000000"
        "000000002ac8df028827904e02002101020380808061a88080068080b0108080c0081020c6b2d421cb5a"
        "d18908c0429255a90e04060100044400000100000000000000002ee0b30e000600040102"
    ),
    "web_block": bytes.fromhex(
        "03097765625f626c6f636b02000700000203010202016432f403322d2d2d030207000307000407000863"
        "6f6d7061742d3310036403416e610342656e00000000000000000000000000000000000007c8df028827"
        "904e020500010100808080208090801000000b1e74214a56363040014b1803000002090900000100b4e1"
        "f706000000000001010002010500020b1001808080208090801000000ee0d1040007000902"
    ),
}

#: A web_fives state at two seats (format 3 with all fives), as first written: Ben just
#: laid 1-1 on the spinner's upper side (5-1, then 1-1) for 10 points.
FIVES_IN_PLAY = bytes.fromhex(
    "03097765625f666976657302000701000203010202026432f403322d2d2d0302070003050004050008636f6d"
    "7061742d350d026403416e610342656e00000000000000000000000000000000000000c8df028827904e020a"
    "0a0101008080a008808e8101000008600046752d2842120402000000000000020b161b01140f1210110c0317"
    "0000000300000502294900000bc0b5030006010703020a"
)


@pytest.mark.parametrize("name", sorted(STORED_BEFORE_ALL_FIVES))
def test_a_format_3_state_stored_before_all_fives_decodes_and_encodes_unchanged(
    name: str,
) -> None:
    stored = STORED_BEFORE_ALL_FIVES[name]
    state = decode_state(stored)
    assert state.rules.preset == name and state.rules.scoring is Scoring.BLOCK
    assert encode_state(state) == stored
    rnd = state.round
    assert (rnd.center, rnd.up, rnd.down) == (-1, (), ())
    if state.last_result is not None:
        assert state.last_result.unrounded_points == 0
    if isinstance(state.last_action, TileLaid):
        assert state.last_action.points == 0


def test_a_stored_web_block_round_over_keeps_its_phase() -> None:
    assert decode_state(STORED_BEFORE_ALL_FIVES["web_block"]).phase is Phase.ROUND_OVER


def test_an_all_fives_state_keeps_its_spinner_and_the_points_of_its_last_play() -> None:
    state = decode_state(FIVES_IN_PLAY)
    assert state.rules == preset("web_fives", seats=2) and state.scores == (10, 10)
    rnd = state.round
    assert rnd.center == 4 and rnd.up == (0 << 6 | 5 << 3 | 1, 1 << 6 | 1 << 3 | 1)
    assert rnd.down == ()
    assert state.last_action == TileLaid(1, tiles("1-1")[0], 3, state.last_action.auto, 10)
    assert encode_state(state) == FIVES_IN_PLAY


def test_an_all_fives_round_result_keeps_its_unrounded_points() -> None:
    fives2 = preset("web_fives", seats=2)
    state = playing(fives2, ("1-2", "6-6 4-6"), turn=0, lead=tiles("1-2")[0])
    over = apply(state, Play(0, tiles("1-2")[0], 1), NOW).state
    assert over.last_result.unrounded_points == 22 and over.last_result.points == 20
    assert decode_state(encode_state(over)) == over


def test_points_of_a_play_outside_all_fives_are_not_encoded() -> None:
    state = playing(preset("web_draw", seats=2), ("1-2 0-0", "6-6"), turn=0)
    bad = state._replace(last_action=TileLaid(0, 1, 1, AutoCause.NONE, 5))
    with pytest.raises(CodecError):
        encode_state(bad)

"""The observation's all-fives layout is the engine's (ends, totals and placements), rebuilt
from what the view shows; a seat without a move draws while it may, else passes."""

from __future__ import annotations

import random

from services.robots.observation import layout_of, no_move
from services.rules import NOBODY, Draw, Pass
from services.rules import fives as engine_fives
from services.rules.rulesets import preset
from services.rules.spinner import EMPTY, ends_total, place, play_points

from .positions import BLOCK2, DRAW2, line, observe, random_turns


def test_the_layout_of_the_view_is_the_engines_at_every_turn_of_all_fives_games() -> None:
    rng = random.Random(11)
    checked = 0
    for seats in (2, 3, 4):
        rules = preset("web_fives", seats=seats)
        for game in range(4):
            for state in random_turns(rules, game, rng):
                assert state.round is not None
                observation = observe(state)
                engine = engine_fives.layout_of(state.round)
                assert observation.layout.ends == engine.ends
                assert ends_total(observation.layout) == ends_total(engine)
                if engine_fives.spinner_index(state.round) != NOBODY:
                    assert observation.layout == engine
                for move in observation.moves:
                    after = place(observation.layout, move.tile, move.end)
                    assert after.ends == place(engine, move.tile, move.end).ends
                    assert play_points(after) == move.points
                checked += 1
    assert checked > 200


def test_an_empty_chain_is_the_empty_layout_and_other_scorings_keep_it() -> None:
    assert layout_of((), NOBODY) == EMPTY
    assert observe(line(BLOCK2, ("1-2", "3-4"), "5-6")).layout == EMPTY


def test_without_a_move_a_seat_draws_while_it_may_else_passes() -> None:
    drawing = observe(line(DRAW2, ("2-3", "1-1"), "6-6", stock="0-5"))
    assert no_move(drawing) == Draw(0)
    assert no_move(observe(line(BLOCK2, ("2-3", "1-1"), "6-6"))) == Pass(0)

"""All fives as the client shows it (services/client/fives.py, the spinner in
services/client/chain.py): the ends' total, the open ends, each placement with its points, a
play that scored, the round's points rounded, a game ended by a play; in both languages,
never a rule id. And the game screen with the spinner and four open ends fits 80 x 24."""

from __future__ import annotations

import pytest
from dominos.v1 import game_pb2
from textual.widgets import Select

from services.client import texts
from services.client.app import DominosApp
from services.client.chain import Arm, arm_rows, chain_drawing, newest_arm, newest_index
from services.client.fives import (
    ended_by_play_text,
    ends_total,
    open_ends_text,
    placements_text,
    rounding_text,
    scored_text,
)
from services.client.journal import Journal, RoundResult, history_lines, round_result_line
from services.client.last_action import last_action_text
from services.client.rule_sets import PLAYABLE, choice_of
from services.client.start_screen import StartScreen
from services.client.summaries import round_line, round_summary_lines, winner_text
from services.client.tiles import hand_items
from services.client.widgets import screen_text
from tests.client.pilots import fits, shows_game, text_of
from tests.client.views import (
    NAMES,
    RULE_ID,
    SMALL,
    TABLE_WIDGETS,
    fives_view,
    ruled_summary,
    ruled_view,
)

FIVES_WIDGETS = (*TABLE_WIDGETS, "moves")


def laid(view: game_pb2.TableView, chain: list[tuple[int, int]], ends: dict[int, int]) -> None:
    del view.chain[:], view.open_ends[:]
    for left, right in chain:
        view.chain.add(left=left, right=right)
    for end, number in ends.items():
        view.open_ends.add(end=end, number=number)


L, R, U, D = game_pb2.END_LEFT, game_pb2.END_RIGHT, game_pb2.END_UP, game_pb2.END_DOWN


def test_the_ends_total_counts_as_the_table_scores() -> None:
    view = ruled_view("web_fives", 2)
    laid(view, [(3, 2)], {L: 3, R: 2})
    assert ends_total(view) == 5  # the opener alone: both halves
    laid(view, [(5, 5)], {L: 5, R: 5})
    view.spinner_index = 0
    assert ends_total(view) == 10  # the spinner alone: both halves, once
    laid(view, [(5, 5), (5, 3)], {L: 5, R: 3})
    assert ends_total(view) == 13  # one long side uncovered: the spinner still counts
    laid(view, [(2, 5), (5, 5), (5, 3)], {L: 2, R: 3, U: 5, D: 5})
    view.spinner_index = 1
    assert ends_total(view) == 5  # both covered: the empty short sides count nothing
    view.up_arm.add(left=5, right=4)
    view.down_arm.add(left=5, right=6)
    view.down_arm.add(left=6, right=6)
    del view.open_ends[:]
    for end, number in {L: 2, R: 3, U: 4, D: 6}.items():
        view.open_ends.add(end=end, number=number)
    assert ends_total(view) == 2 + 3 + 4 + 12  # a double at an end: both halves
    assert ends_total(fives_view()) == 13
    assert ends_total(ruled_view("web_fives", 2)) == 0


def test_the_open_ends_are_listed_with_their_numbers_and_total_in_both_languages() -> None:
    view = fives_view()
    assert open_ends_text(view, "fr") == "Bouts : gauche 2 · droite 1 · haut 4 · bas 6 · total 13"
    assert open_ends_text(view, "en") == ("Ends: left 2 · right 1 · top 4 · bottom 6 · total 13")
    assert open_ends_text(ruled_view("web_fives", 2), "fr") == ""


def test_each_placement_shows_its_key_and_points() -> None:
    items = {i.text: i for i in hand_items(fives_view())}
    assert items["[1|6]"].ends == (R, D) and items["[1|6]"].points == (0, 10)
    assert placements_text(items["[1|6]"], "fr") == "[1|6] → D droite · B bas +10"
    assert placements_text(items["[2|4]"], "fr") == "[2|4] → G gauche +15 · U haut"
    assert placements_text(items["[2|4]"], "en") == "[2|4] → L left +15 · U top"
    assert placements_text(items["[4|6]"], "en") == "[4|6] → U top +15"
    assert placements_text(items["[3|4]"], "en") == ""


def test_a_play_that_scores_says_so_in_both_languages() -> None:
    view = fives_view(seats=2, names=NAMES)
    view.last_action.seat = 1
    assert scored_text(view, view.last_action, "fr") == "Bob marque 15 (bouts : 15)."
    assert last_action_text(view, "fr") == "Bob a posé [0|6] en bas. Bob marque 15 (bouts : 15)."
    assert last_action_text(view, "en") == (
        "Bob laid [0|6] at the bottom. Bob scores 15 (ends: 15)."
    )
    view.last_action.points = 0
    view.last_action.move.end = U
    assert last_action_text(view, "fr") == "Bob a posé [0|6] en haut."
    assert last_action_text(view, "en") == "Bob laid [0|6] at the top."
    assert scored_text(view, view.last_action, "en") == ""


def test_the_history_lists_the_points_of_every_play() -> None:
    journal = Journal()
    view = fives_view(seats=2, names=NAMES)
    journal.record(view)
    second = fives_view(seats=2, names=NAMES)
    second.version += 1
    second.last_action.seat, second.last_action.points = 0, 0
    second.last_action.move.end = L
    journal.record(second)
    lines = history_lines(journal, second, "fr", 11)
    assert lines[-2:] == [
        "Bob a posé [0|6] en bas. Bob marque 15 (bouts : 15).",
        "Ann a posé [0|6] à gauche.",
    ]


def fives_summary(points: int, unrounded: int) -> game_pb2.TableView:
    view = ruled_summary(
        ruled_view("web_fives", 2), game_pb2.ROUND_OUTCOME_DOMINO, points, [0, unrounded], 0, 0
    )
    view.last_round.unrounded_points = unrounded
    return view


def test_round_summaries_say_the_rounded_and_the_unrounded_points() -> None:
    view = fives_summary(20, 18)
    fr = round_summary_lines(view, "fr")
    assert fr[1] == (
        "Ann marque 20 points : ce qui reste dans la main de l'adversaire (Bob 18). "
        "Arrondi au 5 le plus proche : 18 arrondis à 20."
    )
    en = round_summary_lines(view, "en")
    assert en[1].endswith("Rounded to the nearest 5: 18 rounded to 20.")
    assert "(18 arrondis à 20)" in round_line(view, "fr")
    same = round_summary_lines(fives_summary(15, 15), "fr")[1]
    assert same.endswith("Arrondi au 5 le plus proche : 15, déjà un multiple de 5.")
    assert rounding_text(fives_summary(0, 2).last_round, "en") == "2 rounded to 0"
    assert rounding_text(fives_summary(0, 1).last_round, "fr") == "1 arrondi à 0"
    result = RoundResult(3, 0, 20, 0, 0, False, teams=False, scoring_side=0, scores=(40, 12),
                         names=("Ann", "Bob"), unrounded=18)  # fmt: skip
    assert round_result_line(result, "fr") == (
        "Manche 3 · Ann +20 (18 arrondis à 20) · Ann 40 · Bob 12"
    )
    assert (
        round_result_line(result, "en") == "Round 3 · Ann +20 (18 rounded to 20) · Ann 40 · Bob 12"
    )
    for lang in texts.LANGS:
        assert not any(RULE_ID.search(line) for line in round_summary_lines(view, lang))


def test_a_game_ended_by_a_play_mid_round_is_told() -> None:
    view = fives_view(seats=2, names=NAMES)
    view.last_action.seat = 1
    assert ended_by_play_text(view, "fr") == ""  # still playing
    view.phase = game_pb2.PHASE_FINISHED
    view.winner_side = 1
    del view.side_scores[:]
    view.side_scores.extend([40, 105])
    fr = ended_by_play_text(view, "fr")
    assert fr == (
        "Bob a atteint l'objectif (100) en marquant 15 avec [0|6] : la partie s'arrête là, "
        "au milieu de la manche 3."
    )
    assert ended_by_play_text(view, "en") == (
        "Bob reached the target (100) scoring 15 with [0|6]: the game ends there, in the "
        "middle of round 3."
    )
    assert winner_text(view, "fr") == "Bob gagne la partie avec 105 points (Ann 40)."
    ended = fives_summary(20, 18)
    ended.phase = game_pb2.PHASE_FINISHED
    ended.last_action.CopyFrom(view.last_action)
    assert ended_by_play_text(ended, "fr") == ""  # ended with the round: its summary says it


def test_the_spinner_is_framed_with_its_short_sides_above_and_below() -> None:
    chain = [(2, 5), (5, 5), (5, 3)]
    up, down = Arm(((5, 2), (2, 4)), True, 5), Arm((), True, 5)
    drawing = chain_drawing(chain, 40, spinner=1, up=up, down=down, newest_arm="up")
    assert drawing.rows == [
        "       ↑ [5|2] [2|4]",
        "      ╔5╗",
        "[2|5] ╠═╣ [5|3]",
        "      ╚5╝",
        "       ↓ (5)",
    ]
    assert drawing.newest == [(0, 15, 20)]
    assert drawing.rows[0][15:20] == "[2|4]"
    closed = chain_drawing([(5, 5), (5, 3)], 40, spinner=0, up=Arm(), down=Arm())
    assert closed.rows == ["╔5╗", "╠═╣ [5|3]", "╚5╝"]  # short sides not open yet
    narrow = chain_drawing(chain, 16, spinner=1, up=Arm(((5, 2), (2, 4), (4, 4)), True, 5))
    assert all(len(row) <= 16 for row in narrow.rows), narrow.rows
    assert arm_rows("↑", Arm(((5, 2), (2, 4), (4, 4)), True, 5), 14)[0] == [
        "↑ [5|2] [2|4]",
        "  [4|4]",
    ]


def test_the_newest_tile_on_a_short_side_is_found_there() -> None:
    view = fives_view()
    move = game_pb2.Move(tile=game_pb2.Tile(low=0, high=6), end=D)
    assert newest_arm(view, move) == "down" and newest_index(view, move) is None
    other = game_pb2.Move(tile=game_pb2.Tile(low=1, high=1), end=U)
    assert newest_arm(view, other) is None
    assert newest_arm(view, None) is None


@pytest.mark.parametrize("seats", [4, 2])
async def test_a_fives_table_with_four_open_ends_fits_80_by_24(seats: int) -> None:
    for lang in texts.LANGS:
        app = DominosApp(lang=lang, connect=False)
        sent: list[game_pb2.Move] = []

        async def play(move: game_pb2.Move, sent: list[game_pb2.Move] = sent) -> None:
            sent.append(move)

        app.play = play  # type: ignore[method-assign]
        async with app.run_test(size=SMALL) as pilot:
            app.apply_view(fives_view(seats))
            await shows_game(pilot, app)
            app.game_screen.say(texts.ui("unavailable", lang))  # the longest message
            await pilot.press("7")  # [4|6]: only the top, +15
            await pilot.pause()
            assert fits(app, FIVES_WIDGETS) == [], lang
            shown = screen_text(app)
            print(f"\n{shown}")
            chain = text_of(app, "chain")
            assert "╔5╗" in chain and "↑ [5|2] [2|4]" in chain and "↓ [5|0] [0|0] [0|6]" in chain
            rows = chain.split("\n")
            up = next(i for i, row in enumerate(rows) if "↑" in row)
            down = next(i for i, row in enumerate(rows) if "↓" in row)
            spinner = next(i for i, row in enumerate(rows) if "╠═╣" in row)
            assert up < spinner < down
            assert text_of(app, "ends") == open_ends_text(app.view, lang)  # type: ignore[arg-type]
            placed = "U haut +15" if lang == "fr" else "U top +15"
            assert text_of(app, "moves") == f"[4|6] → {placed}"
            assert texts.ui("keys_fives", lang) in shown
            scored = "marque 15 (bouts : 15)" if lang == "fr" else "scores 15 (ends: 15)"
            assert scored in text_of(app, "last-action")
            assert not RULE_ID.search(shown)
            await pilot.press("enter")  # its only end
            await pilot.pause()
            assert sent == [game_pb2.Move(tile=game_pb2.Tile(low=4, high=6), end=U)]
            await pilot.press("3")  # [2|4]: left or top
            await pilot.press("enter")
            await pilot.pause()
            message = text_of(app, "message")
            if lang == "fr":
                assert message == "Ce domino va sur plusieurs bouts : G (gauche), U (haut) ?"
            else:
                assert message == "That tile fits several ends: L (left), U (top)?"
            await pilot.press("1")  # [0|2]: the left end only
            await pilot.press("b")
            await pilot.pause()
            assert text_of(app, "message") == texts.ui("does_not_fit", lang)
            await pilot.press("2")  # [1|6]: right, or the bottom +10
            await pilot.press("b")
            await pilot.pause()
            assert sent[-1] == game_pb2.Move(tile=game_pb2.Tile(low=1, high=6), end=D)
            assert len(sent) == 2


async def test_the_start_screen_lists_all_fives() -> None:
    assert "web_fives" in PLAYABLE
    names: tuple[tuple[texts.Lang, str], ...] = (("fr", "Tous les cinq"), ("en", "All fives"))
    for lang, name in names:
        app = DominosApp(lang=lang, connect=False)
        async with app.run_test(size=SMALL) as pilot:
            await pilot.pause()
            assert isinstance(app.screen, StartScreen)
            select = app.screen.query_one("#preset", Select)
            assert (name, "web_fives") in [(str(p), v) for p, v in select._options]
            select.value = "web_fives"
            await pilot.pause()
            assert app.screen.chosen_rules() == choice_of("web_fives", 4)

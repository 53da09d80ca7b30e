"""The "tous les 5" layout and scoring (seed 002): the spinner, the ends' total, the points
of each placement, rounding and the end of the game by a play.

Seed 002 (French): "le premier double posé devient le pivot ... On peut jouer sur ses deux
grands côtés et, une fois ceux-ci couverts, sur ses deux petits côtés aussi. Chaque fois
qu'un coup fait totaliser aux bouts ouverts un multiple de 5, vous marquez aussitôt ce
nombre de points. Le pivot compte ses deux moitiés tant qu'un de ses grands côtés est encore
ouvert." / "Un double à un bout compte ses deux moitiés." / "les points obtenus en posant
son dernier domino ou en gagnant une manche bloquée sont arrondis au multiple de 5 le plus
proche." / "l'atteindre en posant un domino met fin à la partie sur-le-champ."

The worked sequences below are derived by hand from those sentences; each step gives the
tile, the end, the open ends after it, their total and the points scored.
"""

from __future__ import annotations

from itertools import pairwise

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from services.rules import errors as e
from services.rules.spinner import (
    EMPTY,
    NO_TILE,
    Arm,
    IllegalPlacement,
    Laid,
    Layout,
    Placement,
    ends_total,
    fits,
    game_won_by_play,
    laid_mask,
    open_ends,
    place,
    placements,
    play_points,
    round_to_five,
    short_sides_open,
)
from services.rules.state import End
from services.rules.tiles import ALL_TILES, HIGH, LOW, NO_END, TILE_COUNT, tile_index

from .builders import hand, tiles

L, R, U, D = Arm.LEFT, Arm.RIGHT, Arm.UP, Arm.DOWN


def t(spec: str) -> int:
    """The tile of ``"6-4"`` (halves in any order)."""
    (tile,) = tiles(spec)
    return tile


def lay(*moves: tuple[str, Arm]) -> Layout:
    """The layout after laying ``moves`` (tile spec, end) from the empty table."""
    layout = EMPTY
    for spec, end in moves:
        layout = place(layout, t(spec), end)
    return layout


def ends(layout: Layout) -> dict[Arm, int]:
    return {end: number for end, number in open_ends(layout)}


Step = tuple[str, Arm, dict[Arm, int], int, int]


def _check_sequence(steps: list[Step]) -> None:
    """Lay each step's tile and check the open ends, their total and the points scored."""
    layout = EMPTY
    for spec, end, expected_ends, total, points in steps:
        layout = place(layout, t(spec), end)
        assert ends(layout) == expected_ends, (spec, end)
        assert ends_total(layout) == total, (spec, end)
        assert play_points(layout) == points, (spec, end)


# --- the four ends ---------------------------------------------------------------------------


def test_arm_left_and_right_are_the_engines_end_values() -> None:
    assert (int(Arm.LEFT), int(Arm.RIGHT)) == (int(End.LEFT), int(End.RIGHT))
    assert (int(Arm.UP), int(Arm.DOWN)) == (3, 4)


def test_illegal_placement_is_a_rule_error_keeping_the_tile_does_not_fit_reason() -> None:
    assert issubclass(IllegalPlacement, e.RuleError)
    assert IllegalPlacement.reason == "TILE_DOES_NOT_FIT"
    assert IllegalPlacement.reason in e.ALL_REASONS


# --- worked sequences (seed 002) -------------------------------------------------------------


def test_seed002_opener_5_5_is_the_spinner_and_scores_10_then_5_0_scores_10() -> None:
    _check_sequence(
        [
            # 5-5 alone: the spinner, both halves: 10.
            ("5-5", L, {L: 5, R: 5}, 10, 10),
            # 5-0 on the right: the spinner is still an end on its left side (10) + 0 = 10.
            ("5-0", R, {L: 5, R: 0}, 10, 10),
            # 5-3 on the left: both long sides covered, the spinner stops counting: 3 + 0.
            # Its short sides open, showing 5.
            ("5-3", L, {L: 3, R: 0, U: 5, D: 5}, 3, 0),
            # 5-2 up: 3 + 0 + 2 = 5.
            ("5-2", U, {L: 3, R: 0, U: 2, D: 5}, 5, 5),
            # 5-4 down: 3 + 0 + 2 + 4 = 9.
            ("5-4", D, {L: 3, R: 0, U: 2, D: 4}, 9, 0),
            # 0-6 on the right: 3 + 6 + 2 + 4 = 15.
            ("0-6", R, {L: 3, R: 6, U: 2, D: 4}, 15, 15),
        ]
    )


def test_seed002_a_6_4_line_then_4_4_becomes_the_spinner_on_the_left() -> None:
    _check_sequence(
        [
            # 6-4 opens: no double yet, an ordinary line with ends 4 and 6: 10.
            ("6-4", L, {L: 4, R: 6}, 10, 10),
            # 4-4 on the 4: the first double, the spinner; its left side open: 8 + 6 = 14.
            ("4-4", L, {L: 4, R: 6}, 14, 0),
            # 6-2 on the 6: 8 + 2 = 10.
            ("6-2", R, {L: 4, R: 2}, 10, 10),
            # 4-0 on the spinner's left: both long sides covered: 0 + 2; up/down open on 4.
            ("4-0", L, {L: 0, R: 2, U: 4, D: 4}, 2, 0),
            # 4-3 up: 0 + 2 + 3 = 5.
            ("4-3", U, {L: 0, R: 2, U: 3, D: 4}, 5, 5),
            # 4-5 down: 0 + 2 + 3 + 5 = 10.
            ("4-5", D, {L: 0, R: 2, U: 3, D: 5}, 10, 10),
            # 2-2 on the right: a double at an end counts both halves: 0 + 4 + 3 + 5 = 12.
            ("2-2", R, {L: 0, R: 2, U: 3, D: 5}, 12, 0),
            # 3-0 up: 0 + 4 + 0 + 5 = 9.
            ("3-0", U, {L: 0, R: 2, U: 0, D: 5}, 9, 0),
            # 5-6 down: 0 + 4 + 0 + 6 = 10.
            ("5-6", D, {L: 0, R: 2, U: 0, D: 6}, 10, 10),
        ]
    )


def test_seed002_a_double_laid_on_the_right_end_becomes_the_spinner() -> None:
    _check_sequence(
        [
            # 3-2 opens: 2 + 3 = 5.
            ("3-2", L, {L: 2, R: 3}, 5, 5),
            # 3-3 on the 3: the spinner, its right side open: 2 + 6 = 8.
            ("3-3", R, {L: 2, R: 3}, 8, 0),
            # 2-2 on the 2: the second double is no spinner; both halves: 4 + 6 = 10.
            ("2-2", L, {L: 2, R: 3}, 10, 10),
            # 3-5 on the spinner's right: both long sides covered: 4 + 5 = 9; up/down on 3.
            ("3-5", R, {L: 2, R: 5, U: 3, D: 3}, 9, 0),
            # 3-1 up: 4 + 5 + 1 = 10.
            ("3-1", U, {L: 2, R: 5, U: 1, D: 3}, 10, 10),
            # 3-6 down: 4 + 5 + 1 + 6 = 16.
            ("3-6", D, {L: 2, R: 5, U: 1, D: 6}, 16, 0),
            # 1-4 up: 4 + 5 + 4 + 6 = 19.
            ("1-4", U, {L: 2, R: 5, U: 4, D: 6}, 19, 0),
            # 2-1 left: 1 + 5 + 4 + 6 = 16.
            ("2-1", L, {L: 1, R: 5, U: 4, D: 6}, 16, 0),
            # 6-6 down: a double at the end of a short side, both halves: 1 + 5 + 4 + 12 = 22.
            ("6-6", D, {L: 1, R: 5, U: 4, D: 6}, 22, 0),
            # 5-4 right: 1 + 4 + 4 + 12 = 21; 4-4 up would then make 1 + 4 + 8 + 12 = 25.
            ("5-4", R, {L: 1, R: 4, U: 4, D: 6}, 21, 0),
            ("4-4", U, {L: 1, R: 4, U: 4, D: 6}, 25, 25),
        ]
    )


def test_seed002_a_line_with_no_double_scores_its_two_ends() -> None:
    _check_sequence(
        [
            ("0-1", L, {L: 0, R: 1}, 1, 0),
            ("1-4", R, {L: 0, R: 4}, 4, 0),
            ("0-6", L, {L: 6, R: 4}, 10, 10),
            ("4-5", R, {L: 6, R: 5}, 11, 0),
            ("6-3", L, {L: 3, R: 5}, 8, 0),
            ("5-2", R, {L: 3, R: 2}, 5, 5),
        ]
    )


def test_seed002_a_double_at_an_end_counts_both_halves() -> None:
    # 1-1 (2), 1-4 right (2 + 4 = 6), 1-2 left (both covered: 2 + 4 = 6), then 4-4 on the
    # right: 2 + 8 = 10 scores 10; counted once it would be 6 and score nothing.
    layout = lay(("1-1", L), ("1-4", R), ("1-2", L))
    assert (ends_total(layout), play_points(layout)) == (6, 0)
    layout = place(layout, t("4-4"), R)
    assert ends(layout)[R] == 4
    assert (ends_total(layout), play_points(layout)) == (10, 10)


def test_seed002_the_spinner_counts_both_halves_while_one_long_side_is_open() -> None:
    alone = lay(("6-6", L))
    assert ends_total(alone) == 12  # the only tile: both halves, once
    one_side = place(alone, t("6-1"), L)
    assert ends_total(one_side) == 12 + 1  # its right side still open
    covered = place(one_side, t("6-3"), R)
    assert ends_total(covered) == 1 + 3  # both long sides covered: it no longer counts
    assert ends(covered)[U] == ends(covered)[D] == 6  # its short sides show 6, uncounted


def test_seed002_a_total_of_zero_scores_nothing() -> None:
    layout = lay(("0-0", L))
    assert (ends_total(layout), play_points(layout)) == (0, 0)
    layout = place(layout, t("0-5"), R)
    assert (ends_total(layout), play_points(layout)) == (5, 5)


# --- the spinner opens its short sides after both long sides are covered -----------------------


def test_seed002_short_sides_open_only_once_both_long_sides_are_covered() -> None:
    layout = lay(("5-5", L))
    assert not short_sides_open(layout)
    assert fits(layout, t("5-1")) == (L, R)
    with pytest.raises(IllegalPlacement):
        place(layout, t("5-1"), U)
    layout = place(layout, t("5-1"), R)
    assert not short_sides_open(layout)
    assert fits(layout, t("5-2")) == (L,)
    with pytest.raises(IllegalPlacement):
        place(layout, t("5-2"), D)
    layout = place(layout, t("5-2"), L)
    assert short_sides_open(layout)
    assert fits(layout, t("5-3")) == (U, D)
    assert fits(layout, t("2-1")) == (L, R)


def test_seed002_a_line_has_two_ends_until_the_first_double() -> None:
    layout = lay(("6-4", L), ("4-1", L), ("6-1", R))
    assert ends(layout) == {L: 1, R: 1}
    assert layout.spinner == NO_TILE
    assert fits(layout, t("1-3")) == (L, R)
    with pytest.raises(IllegalPlacement):
        place(layout, t("1-3"), U)


def test_seed002_only_the_first_double_is_the_spinner() -> None:
    layout = lay(("3-2", L), ("3-3", R), ("2-2", L))
    assert layout.spinner == layout.center == t("3-3")
    # The spinner's left is covered by 3-2 then 2-2, its right side is still open: no short
    # sides, whatever the 2-2 beside.
    assert fits(layout, t("2-0")) == (L,)
    assert not short_sides_open(layout)


def test_seed002_a_non_double_opener_never_opens_short_sides() -> None:
    layout = lay(("6-4", L), ("4-2", L), ("6-5", R))
    assert not short_sides_open(layout)
    assert ends(layout) == {L: 2, R: 5}


def test_the_line_is_rerooted_on_a_later_spinner() -> None:
    # 6-4, 4-1 left, 1-1 left: the spinner; the line 1-4 4-6 is its right arm, outward.
    layout = lay(("6-4", L), ("4-1", L), ("1-1", L))
    assert layout.center == layout.spinner == t("1-1")
    assert layout.arms == (
        (),
        (Laid(t("1-4"), 1, 4), Laid(t("6-4"), 4, 6)),
        (),
        (),
    )
    assert ends(layout) == {L: 1, R: 6}
    # The mirror image: 2-5, 5-3 right, 3-3 right: the line is the spinner's left arm.
    layout = lay(("2-5", L), ("5-3", R), ("3-3", R))
    assert layout.arms[0] == (Laid(t("5-3"), 3, 5), Laid(t("2-5"), 5, 2))
    assert layout.arms[1:] == ((), (), ())
    assert ends(layout) == {L: 2, R: 3}


# --- illegal placements and malformed input -------------------------------------------------


def test_seed002_illegal_placements_raise_illegal_placement() -> None:
    layout = lay(("6-4", L))
    with pytest.raises(IllegalPlacement):
        place(layout, t("1-2"), L)  # no 4 on 1-2
    with pytest.raises(IllegalPlacement):
        place(layout, t("4-1"), R)  # the right end shows 6
    with pytest.raises(IllegalPlacement):
        place(layout, t("6-4"), L)  # already on the table
    with pytest.raises(IllegalPlacement):
        place(EMPTY, t("6-4"), U)  # the opener goes on the line


def test_malformed_tiles_and_ends_raise_the_engines_errors() -> None:
    with pytest.raises(e.TileMalformed):
        place(EMPTY, TILE_COUNT, L)
    with pytest.raises(e.TileMalformed):
        fits(EMPTY, -1)
    with pytest.raises(e.EndMalformed):
        place(EMPTY, 0, 5)
    with pytest.raises(e.EndMalformed):
        place(EMPTY, 0, 0)


def test_the_opener_may_be_laid_on_either_long_side() -> None:
    assert place(EMPTY, t("6-4"), L) == place(EMPTY, t("6-4"), R)
    assert fits(EMPTY, t("6-4")) == (L,)
    assert open_ends(EMPTY) == ()
    assert ends_total(EMPTY) == 0
    assert play_points(EMPTY) == 0


def test_a_tile_already_laid_fits_nowhere() -> None:
    layout = lay(("5-5", L), ("5-0", R))
    assert fits(layout, t("5-5")) == ()
    assert fits(layout, t("5-0")) == ()


# --- the points of each placement -----------------------------------------------------------


def test_seed002_placements_show_the_points_each_end_would_score() -> None:
    # 5-5 then 5-0 right (ends: the spinner's left 5, right 0); the hand 5-3 0-0 0-4 1-2:
    layout = lay(("5-5", L), ("5-0", R))
    got = placements(layout, hand("5-3 0-0 0-4 1-2"))
    assert got == (
        Placement(t("0-0"), R, 10),  # spinner 10 + 0-0's 0 = 10
        Placement(t("0-4"), R, 0),  # 10 + 4 = 14
        Placement(t("3-5"), L, 0),  # both long sides covered: 3 + 0
    )
    # The same from a list of tiles, in any order.
    assert placements(layout, [t("1-2"), t("0-4"), t("5-3"), t("0-0")]) == got


def test_seed002_placements_on_four_open_ends() -> None:
    layout = lay(("5-5", L), ("5-0", R), ("5-3", L))  # ends L 3, R 0, U 5, D 5 (total 3)
    got = placements(layout, hand("5-2 0-2 3-2"))
    assert got == (
        Placement(t("0-2"), R, 5),  # 3 + 2
        Placement(t("2-3"), L, 0),  # 2 + 0
        Placement(t("2-5"), U, 5),  # 3 + 0 + 2 (+ the down side: the spinner, uncounted)
        Placement(t("2-5"), D, 5),
    )


def test_placements_on_the_empty_table_list_each_tile_once_on_the_left() -> None:
    got = placements(EMPTY, hand("6-4 1-1 3-2"))
    assert got == (
        Placement(t("1-1"), L, 0),
        Placement(t("2-3"), L, 5),
        Placement(t("4-6"), L, 10),
    )


def test_placements_of_a_hand_with_nothing_that_fits_is_empty() -> None:
    assert placements(lay(("6-6", L)), hand("0-1 2-3")) == ()


# --- round points and the end of the game ---------------------------------------------------


@pytest.mark.parametrize(
    ("points", "rounded"),
    [
        (0, 0),
        (1, 0),
        (2, 0),
        (3, 5),
        (4, 5),
        (5, 5),
        (12, 10),
        (13, 15),
        (15, 15),
        (17, 15),
        (18, 20),
        (22, 20),
        (23, 25),
        (97, 95),
        (98, 100),
    ],
)
def test_seed002_round_points_are_rounded_to_the_nearest_five(points: int, rounded: int) -> None:
    assert round_to_five(points) == rounded


@given(st.integers(min_value=0, max_value=10_000))
def test_round_to_five_is_the_nearest_multiple_of_five(points: int) -> None:
    rounded = round_to_five(points)
    assert rounded % 5 == 0
    assert abs(rounded - points) <= 2  # never halfway with integers: the nearest is unique


def test_seed002_reaching_the_target_by_a_play_wins_at_once() -> None:
    assert game_won_by_play((100, 40), 100)
    assert game_won_by_play((40, 35, 105), 100)
    assert not game_won_by_play((95, 90), 100)
    assert not game_won_by_play((0, 0, 0, 0), 50)


# --- properties of any sequence of legal placements ---------------------------------------


def _tile_at(layout: Layout, end: Arm) -> int:
    """The tile lying at ``end``: the arm's last tile, or the center when the arm is empty."""
    arm = layout.arms[end - 1]
    return arm[-1].tile if arm else layout.center


def _reference_total(layout: Layout) -> int:
    """The total of the open ends read from ``open_ends`` (seed 002): each number once, a
    double both halves (the same double at two ends, the lone spinner, counted once), the
    spinner's uncovered short sides not at all."""
    total, seen = 0, set[int]()
    for end, number in open_ends(layout):
        arm = layout.arms[end - 1]
        if not arm and end in (U, D):
            continue
        tile = _tile_at(layout, end)
        if LOW[tile] != HIGH[tile]:
            total += number
        elif tile not in seen:
            seen.add(tile)
            total += 2 * number
    return total


def _line(layout: Layout) -> list[tuple[int, int]]:
    """The long line read left to right, each tile as (left half, right half)."""
    left = [(laid.outer, laid.inner) for laid in reversed(layout.arms[0])]
    right = [(laid.inner, laid.outer) for laid in layout.arms[1]]
    return [*left, (LOW[layout.center], HIGH[layout.center]), *right]


def _check_invariants(layout: Layout, laid: list[int]) -> None:
    # Every open end's number is the outer half of its arm's last tile (or the center's).
    for end, number in open_ends(layout):
        arm = layout.arms[end - 1]
        if arm:
            assert number == arm[-1].outer
        elif end is L:
            assert number == LOW[layout.center]
        else:
            assert number == HIGH[layout.center]
    # Each tile laid once, all on the table, each arm a chain from the center outward.
    assert laid_mask(layout) == sum(1 << tile for tile in laid)
    assert len(laid) == 1 + sum(len(arm) for arm in layout.arms)
    line = _line(layout)
    assert all(a[1] == b[0] for a, b in pairwise(line))
    for arm in layout.arms:
        for laid_tile in arm:
            assert {laid_tile.inner, laid_tile.outer} == {LOW[laid_tile.tile], HIGH[laid_tile.tile]}
    for end in (U, D):
        arm = layout.arms[end - 1]
        if arm:
            assert arm[0].inner == LOW[layout.spinner]
            assert all(a.outer == b.inner for a, b in pairwise(arm))
    # The spinner is the first double laid, the center.
    doubles = [tile for tile in laid if LOW[tile] == HIGH[tile]]
    assert layout.spinner == (doubles[0] if doubles else NO_TILE)
    if doubles:
        assert layout.center == layout.spinner
    # Short sides open exactly when the spinner's long sides are both covered.
    both_covered = layout.spinner != NO_TILE and bool(layout.arms[0]) and bool(layout.arms[1])
    assert short_sides_open(layout) == both_covered
    if not both_covered:
        assert layout.arms[2] == layout.arms[3] == ()
        assert {end for end, _ in open_ends(layout)} == {L, R}
    # The total is the sum of the open ends; the points, the total when a multiple of 5.
    total = ends_total(layout)
    assert total == _reference_total(layout)
    assert play_points(layout) == (total if total % 5 == 0 else 0)


def _check_placements(layout: Layout, rest: int) -> tuple[Placement, ...]:
    got = placements(layout, rest)
    listed = {(p.tile, p.end) for p in got}
    for tile in range(TILE_COUNT):
        ends_of = fits(layout, tile)
        for end in Arm:
            legal = bool(rest >> tile & 1) and end in ends_of
            assert ((tile, end) in listed) == legal
            if end in ends_of:
                place(layout, tile, end)  # fits lists only legal ends
            elif layout.center != NO_TILE or end in (U, D):
                with pytest.raises(IllegalPlacement):
                    place(layout, tile, end)
    for p in got:
        assert p.end in fits(layout, p.tile)  # placements ⊆ fits
        assert p.points == play_points(place(layout, p.tile, p.end))
        if not short_sides_open(layout):
            assert p.end in (L, R)  # no short side before both long sides are covered
    return got


@settings(max_examples=150, deadline=None)
@given(st.lists(st.integers(min_value=0, max_value=10_000), min_size=1, max_size=28))
def test_any_sequence_of_legal_placements_keeps_the_layout_consistent(
    choices: list[int],
) -> None:
    layout, rest = EMPTY, ALL_TILES
    laid: list[int] = []
    for choice in choices:
        options = _check_placements(layout, rest)
        if not options:
            break
        move = options[choice % len(options)]
        layout = place(layout, move.tile, move.end)
        laid.append(move.tile)
        rest &= ~(1 << move.tile)
        _check_invariants(layout, laid)
    assert ends_total(EMPTY) == 0


@settings(max_examples=100, deadline=None)
@given(st.permutations(range(TILE_COUNT)), st.lists(st.integers(0, 3), min_size=28))
def test_layouts_are_immutable_values(order: list[int], ends_choice: list[int]) -> None:
    """Laying never changes the layout it was given, and the same moves give equal layouts."""
    layout = EMPTY
    moves = []
    for tile, pick in zip(order, ends_choice, strict=False):
        ends_of = fits(layout, tile)
        if not ends_of:
            continue
        end = ends_of[pick % len(ends_of)]
        before = layout
        copy = Layout(*before)
        layout = place(layout, tile, end)
        assert before == copy
        moves.append((tile, end))
    again = EMPTY
    for tile, end in moves:
        again = place(again, tile, end)
    assert again == layout
    assert hash(again) == hash(layout)


def test_the_empty_layout_has_no_tile() -> None:
    assert EMPTY.center == EMPTY.spinner == NO_TILE
    assert EMPTY.ends == (NO_END,) * 4
    assert laid_mask(EMPTY) == 0
    assert tile_index(0, 0) == t("0-0")

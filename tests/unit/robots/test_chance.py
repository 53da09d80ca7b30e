"""The random source passed to the players: a seeded stream repeats itself, stays in [0, 1),
and ``pick`` gives every index of a range."""

from __future__ import annotations

import random

from services.robots.chance import Chance, Stream, pick


def test_a_stream_repeats_itself_for_a_seed_and_differs_between_seeds() -> None:
    one, two = Stream(42), Stream(42)
    assert [one.random() for _ in range(100)] == [two.random() for _ in range(100)]
    other = Stream(43)
    assert [Stream(42).random() for _ in range(5)] != [other.random() for _ in range(5)]


def test_a_stream_draws_uniform_floats_in_the_unit_interval() -> None:
    stream = Stream(7)
    values = [stream.random() for _ in range(20_000)]
    assert all(0.0 <= v < 1.0 for v in values)
    assert abs(sum(values) / len(values) - 0.5) < 0.01


def test_pick_gives_every_index_of_the_range_and_no_other() -> None:
    chances: list[Chance] = [Stream(1), random.Random(1)]
    for chance in chances:
        seen = {pick(chance, 5) for _ in range(500)}
        assert seen == {0, 1, 2, 3, 4}

    class Top:
        def random(self) -> float:
            return 0.9999999999999999

    assert pick(Top(), 3) == 2

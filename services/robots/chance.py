"""The random source a computer player draws from, passed in as an argument (players are pure).

:class:`Chance` is the one method a player uses (``random() -> float`` in ``[0, 1)``), which
``random.Random`` has; :class:`Stream` is a small seeded generator of the same shape for
callers that may not import :mod:`random` (the tournament, inside this package).
:func:`pick` turns a draw into an index.
"""

from __future__ import annotations

from typing import Final, Protocol

_MASK64: Final = (1 << 64) - 1
_UNIT: Final = 1.0 / (1 << 53)


class Chance(Protocol):
    """A source of uniform floats in ``[0, 1)`` (``random.Random`` is one)."""

    def random(self) -> float:
        """The next uniform float in ``[0, 1)``."""
        ...


def pick(chance: Chance, count: int) -> int:
    """A uniform index in ``range(count)`` (``count`` > 0), from one draw of ``chance``."""
    return min(int(chance.random() * count), count - 1)


class Stream:
    """A seeded splitmix64 generator: the same seed gives the same floats, on any platform."""

    __slots__ = ("_state",)

    def __init__(self, seed: int) -> None:
        self._state = seed & _MASK64

    def random(self) -> float:
        """The next uniform float in ``[0, 1)`` (53 random bits)."""
        self._state = state = (self._state + 0x9E3779B97F4A7C15) & _MASK64
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK64
        z ^= z >> 31
        return (z >> 11) * _UNIT

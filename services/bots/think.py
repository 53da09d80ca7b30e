"""How long a robot thinks before it moves, so that games feel human (issue 20).

A uniform draw in ``[min, max]`` seconds (``DOMINOS_ROBOT_THINK_MIN_SECONDS`` /
``..._MAX_SECONDS``), never past the seat's short clock: a robot moves at least
:data:`MARGIN_S` before the table would play the seat itself. A turn whose clock has
already run out is not thought about at all.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Protocol

#: How long before its seat's clock ends a robot has moved at the latest.
MARGIN_S: Final = 0.5


class Uniform(Protocol):
    """A random source of uniform floats (``random.Random`` is one)."""

    def uniform(self, a: float, b: float) -> float:
        """A float between ``a`` and ``b``."""
        ...


@dataclass(frozen=True, slots=True)
class ThinkTime:
    """The think-time range, in seconds."""

    min_s: float
    max_s: float

    def delay(self, chance: Uniform, now_ms: int, deadline_ms: int) -> float | None:
        """Seconds to wait before moving; None when the clock leaves no time to move."""
        room = (deadline_ms - now_ms) / 1000 - MARGIN_S
        if room <= 0:
            return None
        low, high = sorted((self.min_s, self.max_s))
        return min(chance.uniform(low, high), room)

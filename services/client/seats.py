"""The seats a player holds, kept on their machine so a closed or crashed client gets its seat
back (S4: a player who comes back takes their seat again).

One JSON file, ``$XDG_DATA_HOME/dominos/seats.json`` (``~/.local/share/dominos/seats.json``
when the variable is unset), mode 0600 in a 0700 directory: it holds seat tokens, which are
secrets (whoever has one plays the seat). A seat is saved when it is taken and forgotten when
its game is over, its table closed, or the server says its token no longer works. Writes go
to a temporary file renamed over the old one, so a crash never leaves half a file.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from services.client.api import SeatCredentials

__all__ = ["SavedSeat", "SeatStore", "default_path"]


def default_path(env: Mapping[str, str] | None = None) -> Path:
    """Where the seats live: under ``XDG_DATA_HOME``, else ``~/.local/share``."""
    env = os.environ if env is None else env
    base = env.get("XDG_DATA_HOME") or str(Path(env.get("HOME") or Path.home()) / ".local/share")
    return Path(base) / "dominos" / "seats.json"


@dataclass(frozen=True, slots=True)
class SavedSeat:
    """A seat held at a table, by its invitation code."""

    code: str
    table_id: str
    seat: int
    token: str
    gateway: str
    name: str
    saved_at: float

    @property
    def credentials(self) -> SeatCredentials:
        return SeatCredentials(self.table_id, self.seat, self.token)


class SeatStore:
    """The saved seats of this user (see the module docstring)."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_path()

    def all(self) -> list[SavedSeat]:
        """Every saved seat, the most recent first (an unreadable file counts as empty)."""
        try:
            raw = json.loads(self.path.read_text())
            seats = [SavedSeat(**entry) for entry in raw.get("seats", [])]
        except (OSError, ValueError, TypeError):
            return []
        return sorted(seats, key=lambda s: s.saved_at, reverse=True)

    def get(self, code: str) -> SavedSeat | None:
        """The seat saved for an invitation code (as typed: case and dashes ignored)."""
        wanted = _normal(code)
        return next((s for s in self.all() if s.code == wanted), None)

    def save(self, code: str, credentials: SeatCredentials, gateway: str, name: str) -> SavedSeat:
        """Remember a seat just taken (replacing any earlier seat of the same code)."""
        seat = SavedSeat(
            _normal(code),
            credentials.table_id,
            credentials.seat,
            credentials.token,
            gateway,
            name,
            time.time(),
        )
        self._write([seat, *(s for s in self.all() if s.code != seat.code)])
        return seat

    def forget(self, code: str) -> None:
        """Drop the seat of a code (its game is over, or its token no longer works)."""
        wanted = _normal(code)
        kept = [s for s in self.all() if s.code != wanted]
        if len(kept) != len(self.all()):
            self._write(kept)

    def _write(self, seats: list[SavedSeat]) -> None:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        temporary = self.path.with_suffix(".tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as file:
            json.dump({"seats": [asdict(s) for s in seats]}, file, indent=1)
        os.chmod(temporary, 0o600)  # an older file created with a wider umask
        os.replace(temporary, self.path)
        with contextlib.suppress(OSError):
            os.chmod(self.path.parent, 0o700)


def _normal(code: str) -> str:
    return "".join(code.split()).replace("-", "").upper()

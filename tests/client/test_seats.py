"""Saved seats (services/client/seats.py): a seat token survives the client in a file only its
user can read, and is forgotten when there is nothing to come back to (S4)."""

from __future__ import annotations

import stat
from pathlib import Path

from services.client.api import SeatCredentials
from services.client.seats import SeatStore, default_path

SEAT = SeatCredentials("t" * 22, 2, "token-" + "x" * 37)


def test_the_seats_live_under_xdg_data_home_or_the_home_share_dir() -> None:
    assert default_path({"XDG_DATA_HOME": "/x"}) == Path("/x/dominos/seats.json")
    assert default_path({"HOME": "/home/ana"}) == Path("/home/ana/.local/share/dominos/seats.json")


def test_a_saved_seat_comes_back_by_its_code_as_typed(tmp_path: Path) -> None:
    store = SeatStore(tmp_path / "d" / "seats.json")
    store.save("abcd-efgh jk", SEAT, "gw:50051", "Chloé")
    saved = store.get("ABCDEFGHJK")
    assert saved is not None and saved.credentials == SEAT
    assert (saved.gateway, saved.name, saved.code) == ("gw:50051", "Chloé", "ABCDEFGHJK")
    assert SeatStore(store.path).get("abcdefghjk") == saved  # another run of the client


def test_the_file_is_readable_by_its_user_only(tmp_path: Path) -> None:
    store = SeatStore(tmp_path / "d" / "seats.json")
    store.save("ABCDEFGHJK", SEAT, "gw", "Ana")
    assert stat.S_IMODE(store.path.stat().st_mode) == 0o600
    assert stat.S_IMODE(store.path.parent.stat().st_mode) == 0o700
    assert SEAT.token in store.path.read_text()  # the token is the secret kept there


def test_a_newer_seat_of_the_same_code_replaces_the_older_and_forget_drops_it(
    tmp_path: Path,
) -> None:
    store = SeatStore(tmp_path / "seats.json")
    store.save("ABCDEFGHJK", SEAT, "gw", "Ana")
    store.save("ZZZZZZZZZZ", SEAT, "gw", "Ana")
    newer = SeatCredentials(SEAT.table_id, 3, "other")
    store.save("ABCDEFGHJK", newer, "gw", "Ana")
    assert [s.code for s in store.all()] == ["ABCDEFGHJK", "ZZZZZZZZZZ"]
    assert store.get("ABCDEFGHJK").credentials == newer  # type: ignore[union-attr]
    store.forget("abcdefghjk")
    assert [s.code for s in store.all()] == ["ZZZZZZZZZZ"]


def test_an_unreadable_file_counts_as_no_seat(tmp_path: Path) -> None:
    path = tmp_path / "seats.json"
    path.write_text("{not json")
    assert SeatStore(path).all() == []
    assert SeatStore(tmp_path / "missing.json").get("ABCDEFGHJK") is None

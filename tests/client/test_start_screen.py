"""The start screen (services/client/start_screen.py): with held seats and an error it fits
80 x 24, and Ctrl+C quits it even from a text field."""

from __future__ import annotations

from pathlib import Path

from services.client import texts
from services.client.app import DominosApp
from services.client.seats import SeatStore
from services.client.start_screen import StartScreen
from services.client.widgets import screen_text
from tests.client.pilots import fits
from tests.client.views import SEAT, SMALL


async def test_the_start_screen_with_held_seats_and_an_error_fits_80_by_24(
    tmp_path: Path,
) -> None:
    store = SeatStore(tmp_path / "seats.json")
    for code in ("AAAAA22222", "BBBBB22222", "CCCCC22222", "DDDDD22222"):
        store.save(code, SEAT, "gw", "Chloé-Marguerite")
    app = DominosApp(lang="fr", connect=False, seats=store)
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        assert isinstance(app.screen, StartScreen)
        app.screen.show_error(texts.ui("seat_forgotten", "fr", code="AAAAA-22222"))
        await pilot.pause()
        assert fits(app, ("name", "target", "create", "code", "join", "saved", "error")) == []
        shown = screen_text(app)
        assert "DDDDD-22222 · Chloé-Marguerite · place 1 · à l'instant" in shown
        assert "Ctrl+C : quitter" in shown


async def test_ctrl_c_quits_the_start_screen_even_from_a_text_field() -> None:
    app = DominosApp(lang="fr", connect=False)
    async with app.run_test(size=SMALL) as pilot:
        await pilot.pause()
        assert app.focused is not None and app.focused.id == "name"
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app._exit
    assert app.return_code == 0

"""The game screen: the table drawn around the player.

The score line on top (with the stock's size, and every player's score without teams), the
partner across (north), the opponents left (west, who plays before you) and right (east, who
plays after you), you at the bottom (south), each with name, team (or its own score without
teams), tiles left, "away" and their passes in words; ``▶`` marks whose turn it is. At two
seats the opponent sits across; at three the next player on the right, the other on the
left. In the middle the chain, wrapped between tiles (never inside one), doubles drawn
across, the newest tile highlighted, and its two open ends. Below: your hand (``*`` and
green: playable, ``>``: selected), whose turn it is with the seconds left, the *Pass* button
(enabled only when the view allows it, ``can_pass``), with a stock the *Draw* button
(``can_draw``: nothing fits and the stock holds tiles), a message line, the last action
(draws say how many tiles, never which). Between rounds the round's summary takes the
middle; ``H`` swaps it for the history (the rounds played with their scores, the moves of
this round). When it becomes your turn the terminal bell rings and the turn line flashes.

All fives (``web_fives``): the spinner framed in the chain, its short sides in compact
notation just above (``↑ [5|2] [2|4]``) and below (``↓ …``) it, the open ends with their
numbers and their total; under the hand the selected tile's placements, each with its key
and the points it would score (``[5|0] → G gauche · D droite +10``); a play that scores says
so; a game ended by a play mid-round is told.

Robots (issue 20): a seat a robot holds shows the robot and its level, a player a robot
plays for meanwhile shows until when they may come back. At a site table whose host chose
the friendly end, a line under the turn says ``F`` proposes to end the game by consent;
(once a round); while the vote runs (the game paused, the turn line counting down the
vote's time) it shows who proposed, who agreed and who is still to answer in place of the
last action, and ``O`` (or ``Y``) accepts, ``N`` refuses; a game ended by consent says so,
unscored.

Keys: ``←``/``→`` or ``1``-``7`` select a tile; ``L`` (or ``G``) lays it on the left end,
``R`` (or ``D``) on the right end, under all fives ``U`` on the top and ``B`` on the bottom
short side of the spinner, ``Enter`` on its only possible end (or draws when nothing
fits and the stock holds tiles); ``T`` draws (*tirer*, *piocher*); ``P`` passes; ``F``
proposes the friendly end, ``O``/``Y`` and ``N`` answer it; ``H`` shows or hides the
history; ``Q`` (or ``Ctrl+C``) quits."""

from __future__ import annotations

import time
from typing import ClassVar, Final

from dominos.v1 import game_pb2
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.widgets import Button

from services.client import texts
from services.client.base_screen import DominosScreen
from services.client.chain import chain_drawing, ends_text, newest_arm, newest_index
from services.client.countdown import remaining_seconds, turn_text
from services.client.fives import (
    END_KEYS,
    arms_of,
    end_name,
    ended_by_play_text,
    is_fives,
    open_ends_text,
    placements_text,
    spinner_of,
)
from services.client.friendly_end import (
    can_answer,
    friendly_end_offered,
    proposed_this_round,
    vote_lines,
    vote_open,
)
from services.client.journal import history_lines
from services.client.last_action import last_action_text
from services.client.rule_sets import has_stock, seat_count
from services.client.scores import score_line
from services.client.seating import relative_seats, seat_column, seat_strip
from services.client.summaries import (
    phase_text,
    round_summary_lines,
    unscored_text,
    winner_text,
)
from services.client.tiles import HandItem, hand_items
from services.client.widgets import Plain

__all__ = ["FLASH_SECONDS", "HISTORY_LINES", "SIDE_WIDTH", "GameScreen"]

SIDE_WIDTH: Final = 16
"""Columns of the west and east seats on the game screen (the chain gets the rest)."""

HISTORY_LINES: Final = 11
"""Lines of the history panel (with its key line and border it takes the table's place)."""

FLASH_SECONDS: Final = 0.8
"""How long the turn line flashes when it becomes your turn."""

_ENDS: Final = {
    "left": game_pb2.END_LEFT,
    "right": game_pb2.END_RIGHT,
    "up": game_pb2.END_UP,
    "down": game_pb2.END_DOWN,
}
_SHORT_SIDES: Final = (game_pb2.END_UP, game_pb2.END_DOWN)


def _my_turn(view: game_pb2.TableView | None) -> bool:
    """Whether this seat must act now (never while a friendly-end vote pauses the game)."""
    return (
        view is not None
        and view.phase == game_pb2.PHASE_PLAYING
        and view.HasField("turn_seat")
        and view.turn_seat == view.your_seat
        and not view.HasField("vote")
    )


def _game_state(view: game_pb2.TableView) -> tuple[int, ...]:
    """What a message next to the Pass button is about: once it changes (a move, a pass, a
    new round), an old message such as "not your turn" is stale."""
    turn = view.turn_seat if view.HasField("turn_seat") else -1
    return (
        view.phase, view.round_number, turn, len(view.chain), view.consecutive_passes,
        view.stock_size, view.HasField("vote"),
    )  # fmt: skip


class GameScreen(DominosScreen):
    """The game: the table around the player, the chain, the hand, Pass, the summaries and
    the history (see the module docstring)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "move(-1)", "←", show=False),
        Binding("right", "move(1)", "→", show=False),
        *[Binding(str(i), f"select({i - 1})", str(i), show=False) for i in range(1, 10)],
        Binding("l,g", "play('left')", "Left"),
        Binding("r,d", "play('right')", "Right"),
        Binding("u", "play('up')", "Top"),
        Binding("b", "play('down')", "Bottom"),
        Binding("enter", "play('any')", "Play"),
        Binding("p", "pass_turn", "Pass"),
        Binding("t", "draw", "Draw"),
        Binding("f", "propose_end", "Friendly end"),
        Binding("o,y", "answer_end(True)", "Accept"),
        Binding("n", "answer_end(False)", "Refuse"),
        Binding("h", "toggle_history", "History"),
        Binding("q", "app.request_quit", "Quit"),
    ]

    selected: int = 0
    history_shown = False
    _state: tuple[int, ...] = ()
    _was_my_turn = False

    def compose(self) -> ComposeResult:
        """The game's widgets."""
        app = self.dominos
        lang = app.lang
        yield Plain("", id="header")
        yield Plain("", id="north")
        with Horizontal(id="middle"):
            yield Plain("", id="west")
            with Vertical(id="center"):
                yield Plain("", id="chain")
                yield Plain("", id="ends")
            yield Plain("", id="east")
        yield Plain("", id="summary")
        yield Plain("", id="history")
        yield Plain("", id="south")
        yield Plain("", id="hand")
        yield Plain("", id="moves")
        with Horizontal(id="actions"):
            yield Plain("", id="turn")
            yield Button(texts.ui("pass", lang), id="pass", disabled=True)
            yield Button(texts.ui("draw", lang), id="draw", disabled=True)
        yield Plain("", id="vote")
        yield Plain("", id="message")
        yield Plain("", id="last-action")
        yield Plain(texts.ui("keys", lang), id="keys")
        yield Plain("", id="status")

    def on_mount(self) -> None:
        """Show the newest view and tick the countdown."""
        self.ready = True
        self.query_one("#pass", Button).can_focus = False
        self.query_one("#draw", Button).can_focus = False
        self.query_one("#history", Plain).display = False
        self.refresh_view()
        self.set_interval(0.2, self.tick)

    def on_resize(self) -> None:
        """Wrap the chain again for the new width."""
        self.refresh_view()

    def _items(self) -> list[HandItem]:
        app = self.dominos
        return hand_items(app.view) if app.view is not None else []

    def _redraw(self) -> None:
        """Everything from the app's newest view."""
        app = self.dominos
        view = self.shown_view()
        if view is None:
            return
        lang = app.lang
        state = _game_state(view)
        if state != self._state:
            self._state = state
            self.say("")  # "not your turn" and the like are about the state before
        self.query_one("#header", Plain).update(score_line(view, lang))
        self._draw_seats(view)
        self._draw_chain(view)
        shown = game_pb2.TableView()
        shown.CopyFrom(view)
        shown.last_action.CopyFrom(app.journal.shown_action(view))
        self.query_one("#last-action", Plain).update(last_action_text(shown, lang))
        items = self._items()
        if items and not (0 <= self.selected < len(items) and items[self.selected].playable):
            playable = [i.index for i in items if i.playable]
            self.selected = playable[0] if playable else min(self.selected, len(items) - 1)
        self._draw_hand(items)
        self.query_one("#pass", Button).disabled = not view.can_pass
        draw = self.query_one("#draw", Button)
        draw.display = has_stock(view.rules)
        draw.disabled = not view.can_draw
        keys = "keys_draw" if has_stock(view.rules) else "keys"
        self.query_one("#keys", Plain).update(
            texts.ui("keys_fives" if is_fives(view) else keys, lang)
        )
        self._draw_middle(view)
        self._draw_vote(view)
        self.query_one("#status", Plain).update(app.status)
        self.tick()
        mine = _my_turn(view)
        if mine and not self._was_my_turn:
            self.your_turn()
        self._was_my_turn = mine

    def _draw_seats(self, view: game_pb2.TableView) -> None:
        """The seats around the player: the opponent across at two seats, left and right at
        three, the partner across and the opponents on both sides at four."""
        lang = self.dominos.lang
        around = relative_seats(view.your_seat, seat_count(view))
        for side in ("north", "south"):
            strip = self.query_one(f"#{side}", Plain)
            strip.display = side in around
            strip.update(seat_strip(view, around[side], lang) if side in around else "")
        for side in ("west", "east"):
            column = self.query_one(f"#{side}", Plain)
            column.display = side in around
            lines = seat_column(view, around[side], lang, SIDE_WIDTH - 1) if side in around else []
            column.update("\n".join(lines))

    def chain_width(self) -> int:
        """Columns the chain may use: the screen less its padding and the side seats."""
        view = self.dominos.view
        sides = 0 if view is not None and seat_count(view) == 2 else 2
        return max(12, self.app.size.width - 2 - sides * SIDE_WIDTH - 2)

    def _draw_chain(self, view: game_pb2.TableView) -> None:
        app = self.dominos
        chain = [(p.left, p.right) for p in view.chain]
        newest = newest_index(view, app.journal.newest_play())
        fives = is_fives(view)
        if fives:
            up, down = arms_of(view)
            drawing = chain_drawing(
                chain,
                self.chain_width(),
                newest,
                spinner=spinner_of(view),
                up=up,
                down=down,
                newest_arm=newest_arm(view, app.journal.newest_play()),
            )
        else:
            drawing = chain_drawing(chain, self.chain_width(), newest)
        if not drawing.rows:
            text = Text(texts.ui("empty_chain", app.lang))
        else:
            text = Text("\n".join(drawing.rows))
            starts = [0]
            for line in drawing.rows:
                starts.append(starts[-1] + len(line) + 1)
            for row, begin, end in drawing.newest:
                text.stylize("bold black on yellow", starts[row] + begin, starts[row] + end)
        self.query_one("#chain", Plain).update(text)
        ends = open_ends_text(view, app.lang) if fives else ends_text(view, app.lang)
        self.query_one("#ends", Plain).update(ends)

    def _draw_middle(self, view: game_pb2.TableView) -> None:
        """The chain and side seats while a round is in play; the round's summary (and the
        winner) between rounds and at the end; the history instead when asked."""
        lang = self.dominos.lang
        lines = round_summary_lines(view, lang)
        ended = ended_by_play_text(view, lang)
        if ended:
            lines.append(ended)
        winner = unscored_text(view, lang) or winner_text(view, lang)
        if winner:
            lines.append(winner)
        elif view.phase == game_pb2.PHASE_CLOSED:
            lines.append(phase_text(view, lang))
        summary = self.query_one("#summary", Plain)
        summary.update("\n".join(lines))
        history = self.query_one("#history", Plain)
        if self.history_shown:
            rows = history_lines(self.dominos.journal, view, lang, HISTORY_LINES)
            width = max(10, self.app.size.width - 6)  # inside the padding and the border
            rows = [row if len(row) <= width else row[: width - 1] + "…" for row in rows]
            history.update("\n".join([*rows, texts.ui("history_keys", lang)]))
        history.display = self.history_shown
        summary.display = bool(lines) and not self.history_shown
        self.query_one("#middle").display = not (self.history_shown or lines)

    def _draw_vote(self, view: game_pb2.TableView) -> None:
        """The friendly end: its key at a table that offers it; while a vote is open, the
        vote in place of the last action (which only said who proposed or agreed)."""
        proposed = proposed_this_round(view, self.dominos.journal.moves)
        lines = vote_lines(view, self.dominos.lang, proposed=proposed)
        vote = self.query_one("#vote", Plain)
        vote.display = bool(lines)
        vote.update("\n".join(lines))
        self.query_one("#last-action", Plain).display = not vote_open(view)

    def _draw_hand(self, items: list[HandItem]) -> None:
        app = self.dominos
        text = Text(texts.labelled(texts.ui("hand", app.lang), "", app.lang))
        for item in items:
            chosen = item.index == self.selected
            mark = "*" if item.playable else " "
            label = f"{'>' if chosen else ' '}{item.index + 1}:{item.text}{mark}"
            if item.playable:
                style = "bold black on green" if chosen else "bold green"
            else:
                style = "reverse dim" if chosen else "dim"
            text.append(label, style=style)
            text.append(" ")
        self.query_one("#hand", Plain).update(text)
        view = app.view
        moves = self.query_one("#moves", Plain)
        moves.display = view is not None and is_fives(view)
        picked = [i for i in items if i.index == self.selected]
        shown = bool(picked) and _my_turn(view) and moves.display
        moves.update(placements_text(picked[0], app.lang) if shown else "")

    def your_turn(self) -> None:
        """It just became your turn: ring the terminal bell and flash the turn line."""
        self.app.bell()
        turn = self.query_one("#turn", Plain)
        turn.add_class("flash")
        self.set_timer(FLASH_SECONDS, lambda: turn.remove_class("flash"))

    def tick(self) -> None:
        """Redraw whose turn it is and the seconds left (R11)."""
        app = self.dominos
        view = self.shown_view()
        if view is None:
            return
        deadline = view.vote.deadline_ms if vote_open(view) else None  # the game is paused
        left = remaining_seconds(view, app.received_at, time.monotonic(), deadline)
        self.query_one("#turn", Plain).update(turn_text(view, left, app.lang))

    def say(self, message: str) -> None:
        """Show a one-line message under the Pass button."""
        self.query_one("#message", Plain).update(message)

    def action_move(self, step: int) -> None:
        """Select the previous/next tile."""
        items = self._items()
        if items:
            self.selected = (self.selected + step) % len(items)
            self._draw_hand(items)

    def action_select(self, index: int) -> None:
        """Select tile ``index`` (0-based)."""
        items = self._items()
        if 0 <= index < len(items):
            self.selected = index
            self._draw_hand(items)

    def action_toggle_history(self) -> None:
        """Show or hide the history (rounds played, this round's moves)."""
        self.history_shown = not self.history_shown
        self.refresh_view()

    def _not_now(self) -> str | None:
        """Why no move can be made now (no round in play, a vote open, another seat's turn),
        or None."""
        view = self.dominos.view
        if view is None or view.phase != game_pb2.PHASE_PLAYING:
            return texts.ui("round_not_in_play", self.dominos.lang)
        if vote_open(view):
            return texts.ui("VOTE_OPEN", self.dominos.lang)
        if not _my_turn(view):
            return texts.ui("not_your_turn", self.dominos.lang)
        return None

    async def action_play(self, end: str) -> None:
        """Lay the selected tile on ``end`` (``left``, ``right``, or ``any``: its only end).
        Out of turn it says so and sends nothing."""
        app = self.dominos
        items = self._items()
        refusal = self._not_now()
        if refusal is not None:
            self.say(refusal)
            return
        if not items or app.view is None:
            return
        item = items[min(self.selected, len(items) - 1)]
        lang = app.lang
        if end == "any":
            if not item.ends and app.view.can_draw:  # nothing fits: Enter draws
                self.say("")
                app.send(app.draw_turn())
                return
            if not item.ends:
                self.say(texts.ui("does_not_fit", lang))
                return
            if len(item.ends) > 1 and app.view.chain:
                self.say(self._pick_end(item))
                return
            chosen = item.ends[0]
        else:
            chosen = _ENDS[end]
            if chosen in _SHORT_SIDES and chosen not in item.ends:
                self.say(texts.ui("does_not_fit", lang))  # never sent: no such end open
                return
        self.say("")
        move = game_pb2.Move(tile=game_pb2.Tile(low=item.low, high=item.high), end=chosen)
        app.send(app.play(move))

    def _pick_end(self, item: HandItem) -> str:
        """Which keys lay ``item`` on the ends it fits (all fives: up to four)."""
        lang = self.dominos.lang
        view = self.dominos.view
        if view is None or not is_fives(view):
            return texts.ui("pick_end", lang)
        keys = END_KEYS[lang]
        ends = [f"{keys[e]} ({end_name(e, lang)})" for e in item.ends]
        return texts.ui("pick_end_of", lang, ends=", ".join(ends))

    async def action_pass_turn(self) -> None:
        """Pass, only when the view says so (R9); otherwise say why not."""
        app = self.dominos
        if app.view is None:
            return
        if not app.view.can_pass:
            refusal = self._not_now()
            if refusal is None and app.view.can_draw:
                refusal = texts.ui("draw_first", app.lang)
            self.say(refusal or texts.ui("must_play", app.lang))
            return
        self.say("")
        app.send(app.pass_turn())

    async def action_draw(self) -> None:
        """Draw a tile from the stock, only when the view says so (``can_draw``); otherwise
        say why not: no stock, not now, a tile fits, the stock is empty."""
        app = self.dominos
        view = app.view
        if view is None:
            return
        if not view.can_draw:
            refusal = self._not_now()
            if refusal is None:
                if not has_stock(view.rules):
                    refusal = texts.ui("no_stock", app.lang)
                elif view.legal_moves:
                    refusal = texts.ui("cannot_draw_fits", app.lang)
                else:
                    refusal = texts.ui("stock_empty", app.lang)
            self.say(refusal)
            return
        self.say("")
        app.send(app.draw_turn())

    async def action_propose_end(self) -> None:
        """Propose the friendly end (tables that offer it, while the game runs, no vote
        open, once a round); otherwise say why not."""
        app = self.dominos
        view = app.view
        if view is None:
            return
        if view.phase in (game_pb2.PHASE_FINISHED, game_pb2.PHASE_CLOSED):
            self.say(texts.ui("GAME_OVER", app.lang))
        elif not friendly_end_offered(view):
            self.say(texts.ui("FRIENDLY_END_UNAVAILABLE", app.lang))
        elif vote_open(view):
            self.say(texts.ui("VOTE_OPEN", app.lang))
        elif proposed_this_round(view, app.journal.moves):  # once a round
            self.say(texts.ui("ALREADY_PROPOSED", app.lang))
        else:
            self.say("")
            app.send(app.propose_end())

    async def action_answer_end(self, accept: bool) -> None:
        """Accept or refuse the open friendly-end proposal, when it waits for this seat's
        answer; otherwise say so."""
        app = self.dominos
        view = app.view
        if view is None:
            return
        if not can_answer(view):
            self.say(texts.ui("NO_VOTE_OPEN", app.lang))
            return
        self.say("")
        app.send(app.answer_end(accept))

    async def on_button_pressed(self, event: Button.Pressed) -> None:
        """The Pass and Draw buttons."""
        if event.button.id == "pass":
            await self.action_pass_turn()
        elif event.button.id == "draw":
            await self.action_draw()

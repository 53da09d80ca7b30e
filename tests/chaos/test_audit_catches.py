"""The chaos audit can fail: fed a clean game it finds nothing, fed each kind of corruption
it reports it (a fork, a version the log lacks, a leaked tile, a log the rules refuse, a
lost acknowledged command, a stored state that is not the log replayed, a wrong score).

A game is played by the engine alone (``tests/unit/table/games.py``) and written into a
real Redis the way the table service lays a table out; fake players hold the views the
service would have sent.
"""

from __future__ import annotations

import random
from typing import Any

from redis.asyncio import Redis

from services.client.api import SeatCredentials
from services.common.projection import table_view
from services.common.schema import table_key
from services.rules import Expire, Outcome, Pass, Phase, Play, encode_state
from services.rules.tiles import HIGH, LOW, tiles_of
from services.table.command_log import encode_log
from testing.chaos_players import Ack, ChaosPlayer
from testing.games import Game, drive, new_game

from .audit import _expected_result, audit_game

CHUNK = 64


async def store(redis: Redis, game: Game, *, state: Any = None, log: Any = None) -> str:
    """Write a table hash as the service does (state and log cut in 64-byte chunks)."""
    table_id = game.state.table_id
    state_bytes = encode_state(state or game.state)
    log_bytes = encode_log(log if log is not None else game.log)
    fields: dict[str, bytes | int] = {"v": (state or game.state).version}
    chunks = [state_bytes[i : i + CHUNK] for i in range(0, len(state_bytes), CHUNK)]
    fields.update({f"s{i}": c for i, c in enumerate(chunks)}, sn=len(chunks))
    chunks = [log_bytes[i : i + CHUNK] for i in range(0, len(log_bytes), CHUNK)]
    fields.update({f"l{i}": c for i, c in enumerate(chunks)}, ln=len(chunks))
    await redis.delete(table_key(table_id))
    await redis.hset(table_key(table_id), mapping=fields)  # type: ignore[arg-type]
    return table_id


def finished_game(seed: int = 3) -> Game:
    game = new_game(seed, target=50)
    rng = random.Random(seed)
    drive(game, rng.randint, max_steps=5_000, expire_pct=15, presence_pct=5)
    assert game.state.phase is Phase.FINISHED
    return game


def players_of(game: Game) -> list[ChaosPlayer]:
    """Four players holding every view the service would have streamed them."""
    players = []
    for seat in range(4):
        player = ChaosPlayer(f"S{seat}", seat, lambda: ["127.0.0.1:1"])
        player.credentials = SeatCredentials(game.state.table_id, seat, "t" * 43)
        player.views = [table_view(s, seat, 1_000 + s.version) for s in game.states[1:]]
        players.append(player)
    return players


async def test_a_clean_game_passes_the_audit(redis_client: Redis) -> None:
    game = finished_game()
    table_id = await store(redis_client, game)
    players = players_of(game)
    audit = await audit_game(redis_client, table_id, players)
    assert audit.problems() == [] and audit.finished
    assert audit.rounds >= 1 and audit.views_checked == 4 * (len(game.states) - 1)


async def test_the_audit_reports_forks_unknown_versions_and_leaks(redis_client: Redis) -> None:
    game = finished_game()
    table_id = await store(redis_client, game)
    players = players_of(game)
    # A view whose score differs from the log's at that version: a fork.
    forked = players[0].views[10]
    forked.score_team_a += 1
    # A view of a version the log does not have.
    beyond = players[1].views[-1].__class__()
    beyond.CopyFrom(players[1].views[-1])
    beyond.version += 5
    players[1].views.append(beyond)
    # A live view showing one of another seat's tiles.
    live = next(i for i, s in enumerate(game.states[1:]) if s.phase is Phase.PLAYING)
    leaking = players[2].views[live]
    state = game.states[1 + live]
    assert state.round is not None
    stolen = next(iter(tiles_of(state.round.hands[3])))
    leaking.hand.add(low=LOW[stolen], high=HIGH[stolen])
    audit = await audit_game(redis_client, table_id, players)
    assert any(f"v{forked.version} differs" in f for f in audit.forks), audit.forks
    assert any(f"v{beyond.version}, not in the log" in f for f in audit.forks), audit.forks
    assert audit.leaks == 1
    assert any("different public fields" in f for f in audit.forks)


async def test_the_audit_reports_a_log_the_rules_refuse_and_a_state_off_the_log(
    redis_client: Redis,
) -> None:
    game = finished_game()
    # The same expiry twice: a turn auto-played twice cannot replay.
    first_expiry = next(i for i, (c, _) in enumerate(game.log) if isinstance(c, Expire))
    doubled = [*game.log[: first_expiry + 1], game.log[first_expiry], *game.log[first_expiry + 1 :]]
    table_id = await store(redis_client, game, log=doubled)
    audit = await audit_game(redis_client, table_id, [])
    assert any("refused by the rules" in g for g in audit.gaps), audit.gaps
    # A stored state that is not the log replayed (a lost tail, a fork).
    table_id = await store(redis_client, game, state=game.states[-3])
    audit = await audit_game(redis_client, table_id, [])
    assert any("is not the log replayed" in f for f in audit.forks), audit.forks


async def test_the_audit_reports_an_acknowledged_command_missing_from_the_log(
    redis_client: Redis,
) -> None:
    game = finished_game()
    table_id = await store(redis_client, game)
    players = players_of(game)
    version, (command, _) = next(
        (i + 1, entry) for i, entry in enumerate(game.log) if isinstance(entry[0], Play)
    )
    assert isinstance(command, Play)
    players[command.seat].acks = [
        Ack(table_id, command.seat, "kept", command, version, 0.0),
        Ack(table_id, command.seat, "lost", Pass(command.seat), version, 0.0),
        Ack(table_id, command.seat, "beyond", command, len(game.log) + 3, 0.0),
    ]
    audit = await audit_game(redis_client, table_id, players)
    assert [a.request_id for a in audit.acks_lost] == ["lost", "beyond"]


def test_the_independent_scoring_follows_the_rules() -> None:
    """R12-R14 by hand: the domino team scores the opponents' pips, a blocked round goes to
    the lighter team for the heavier's total, a tie to the last layer's team."""
    game = finished_game()
    rnd = game.states[-1].round
    assert rnd is not None
    domino = rnd._replace(hands=(0, 0b11, 0, 0b100), last_layer=0)  # seats 1, 3: 0-0 0-1, 0-2
    assert _expected_result(domino, Outcome.DOMINO) == (Outcome.DOMINO, 0, 3)
    blocked = rnd._replace(hands=(0b1, 0b10, 0b100, 0), last_layer=1)  # A: 0-0 + 0-2, B: 0-1
    assert _expected_result(blocked, Outcome.BLOCKED) == (Outcome.BLOCKED, 1, 2)
    tie = rnd._replace(hands=(0b10, 0b10, 0, 0), last_layer=3)  # 1 pip each
    assert _expected_result(tie, Outcome.BLOCKED) == (Outcome.BLOCKED_TIE, 1, 1)

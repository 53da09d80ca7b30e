"""``dominos``: the reference client's command line.

- ``dominos play [--gateway HOST:PORT] [--lang fr|en] [--name NAME]
  [--create --target N [--preset NAME --seats N --hand-size N --turn-seconds N
  --teams/--no-teams] | --join CODE | --resume CODE]``: the terminal client
  (:mod:`services.client.app`). ``--preset`` chooses the table's game (``classic``, the
  default; ``family_draw``, ``web_draw``, ``web_block``, ``web_fives``, ``app``, ``site``)
  and the other rule flags adjust it within what that game allows (the server refuses the
  rest, and the client says why); any of them creates the table at once. Without
  ``--create``/``--join``/``--resume`` it opens the start screen, which lists the seats
  this computer holds at unfinished games. After a mid-game quit it prints the command that
  takes the seat back.
- ``dominos demo [--gateway HOST:PORT] [--target N] [--seed S] [--lang fr|en]``: four scripted
  clients (:mod:`services.client.bots`) play one whole game against a running cluster; every
  round is printed as it ends (number, opener, how it ended, scoring team and points, scores),
  then the winner. Exit status 0 when the game finished, 1 on an error.

The gateway defaults to ``127.0.0.1:50051``, where ``make run`` serves it.
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import sys
import time
from collections.abc import Sequence
from typing import cast

import grpc
from dominos.v1 import game_pb2

from services.client import texts
from services.client.api import DEFAULT_GATEWAY
from services.client.app import DominosApp
from services.client.bots import S2_WARNING, run_demo
from services.client.rule_sets import PLAYABLE, choice_of
from services.client.seats import SeatStore
from services.client.summaries import round_line, winner_text
from services.client.texts import Lang

__all__ = ["DEFAULT_GATEWAY", "main", "parser", "rule_choice"]


def _target(text: str) -> int:
    value = int(text)
    if value < 50 or value > 500 or value % 50:
        raise argparse.ArgumentTypeError("the target is 50..500 in steps of 50")
    return value


def _positive(text: str) -> int:
    value = int(text)
    if value < 1:
        raise argparse.ArgumentTypeError("a positive number")
    return value


def rule_choice(args: argparse.Namespace) -> game_pb2.RuleChoice | None:
    """The ``RuleChoice`` of ``dominos play``'s rule flags (None: the default game)."""
    return choice_of(
        args.preset or "classic", args.seats, args.hand_size, args.turn_seconds, args.teams
    )


def _wants_rules(args: argparse.Namespace) -> bool:
    return (
        bool(args.preset or args.seats or args.hand_size or args.turn_seconds)
        or args.teams is not None
    )


def _default_name() -> str:
    try:
        name = getpass.getuser()
    except (KeyError, OSError):
        name = ""
    return (name or "Joueur")[:24]


def parser() -> argparse.ArgumentParser:
    """The argument parser of ``dominos``."""
    gateway = DEFAULT_GATEWAY
    root = argparse.ArgumentParser(prog="dominos", description="Dominos reference client.")
    commands = root.add_subparsers(dest="command", required=True)

    play = commands.add_parser("play", help="play in the terminal")
    play.add_argument("--gateway", default=gateway, help=f"HOST:PORT (default {gateway})")
    play.add_argument("--lang", choices=texts.LANGS, default="fr", help="fr (default) or en")
    play.add_argument("--name", default=_default_name(), help="your display name")
    mode = play.add_mutually_exclusive_group()
    mode.add_argument("--create", action="store_true", help="create a table at once")
    mode.add_argument("--join", metavar="CODE", help="join the table with this invitation code")
    mode.add_argument(
        "--resume",
        metavar="CODE",
        help="take back the seat this computer holds at that table (--join does it too)",
    )
    play.add_argument(
        "--target",
        type=_target,
        default=100,
        help="with --create: 50..500, step 50 (the game's range)",
    )
    rules = play.add_argument_group("rule set (with --create; any of them creates at once)")
    rules.add_argument(
        "--preset",
        choices=PLAYABLE,
        default=None,
        help="the game: classic (default), " + ", ".join(PLAYABLE[1:]),
    )
    rules.add_argument("--seats", type=_positive, default=0, help="2, 3 or 4 (as the game offers)")
    rules.add_argument(
        "--hand-size", type=_positive, default=0, help="tiles per hand (app: 5 or 7)"
    )
    rules.add_argument(
        "--turn-seconds", type=_positive, default=0, help="turn time (site: 15..120 s)"
    )
    rules.add_argument(
        "--teams",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="partners at four seats (site: --no-teams plays each for themselves)",
    )

    demo = commands.add_parser("demo", help="four scripted clients play one game (dev tool)")
    demo.add_argument("--gateway", default=gateway, help=f"HOST:PORT (default {gateway})")
    demo.add_argument("--target", type=_target, default=100, help="50..500, step 50")
    demo.add_argument("--seed", type=int, default=None, help="make the bots' choices repeatable")
    demo.add_argument("--lang", choices=texts.LANGS, default="en", help="en (default) or fr")
    demo.add_argument("--timeout", type=float, default=600.0, help="give up after SECONDS")
    return root


def _play(args: argparse.Namespace) -> int:
    create = args.create or (_wants_rules(args) and not (args.join or args.resume))
    app = DominosApp(
        args.gateway,
        lang=cast(Lang, args.lang),
        player_name=args.name,
        create_target=args.target if create else None,
        create_rules=rule_choice(args) if create else None,
        join_code=args.join,
        resume_code=args.resume,
        seats=SeatStore(),
    )
    app.run()
    return 0


async def _demo(args: argparse.Namespace) -> int:
    lang = cast(Lang, args.lang)
    print(S2_WARNING, file=sys.stderr, flush=True)
    print(f"Demo game at {args.gateway}, target {args.target}.", flush=True)
    started = time.monotonic()

    def on_round(view: game_pb2.TableView) -> None:
        print(round_line(view, lang), flush=True)

    result = await run_demo(
        args.gateway, args.target, seed=args.seed, on_round=on_round, time_limit=args.timeout
    )
    print(winner_text(result.final, lang), flush=True)
    elapsed = time.monotonic() - started
    print(f"{len(result.rounds)} rounds in {elapsed:.1f} s.", flush=True)
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``dominos`` with ``argv`` (default: the process arguments); returns the exit code."""
    root = parser()
    args = root.parse_args(argv)
    if args.command == "play" and _wants_rules(args) and (args.join or args.resume):
        root.error("the rule flags choose a new table's game: use them with --create")
    if args.command == "play":
        return _play(args)
    try:
        return asyncio.run(_demo(args))
    except grpc.aio.AioRpcError as error:
        print(
            f"demo failed: {error.code().name}: {error.details()} (is the cluster running at "
            f"{args.gateway}? `make run`)",
            file=sys.stderr,
        )
    except TimeoutError:
        print(f"demo failed: the game was not over after {args.timeout} s", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main())

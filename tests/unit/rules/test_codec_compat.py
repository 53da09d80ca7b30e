"""Stored tables keep decoding (issue 19): bytes written by the engine before rule sets
existed (state format 2, command log of the table service) decode to the classic rule set,
unchanged, and a classic state still encodes to exactly those bytes."""

from __future__ import annotations

from services.rules import Phase, decode_state, encode_state, replay
from services.rules.rulesets import CLASSIC
from services.table.command_log import decode_log, encode_log

#: A command log written before issue 19: a game to 150, round 1 played to its end by
#: auto-play choices, the break, five moves of round 2 and one expiry.
LOG_BEFORE_RULE_SETS = bytes.fromhex(
    "00e80708636f6d7061742d3103416e619601b0ea018827904e10640342656e10640643686c6fc3a910640644"
    "c3a964c3a971640140640123456789abcdef0123456789abcdef51bc050152bc050953bc050e50bc052151bc"
    "052952bc051163bc0550bc050551bc052d52bc052653bc051e50bc053251bc051552bc051953bc056950bc05"
    "4651bc053e52bc054e53bc054150bc053951bc055552bc055253bc055e60bc0551bc056d80904e1a52840"
    "70d538407155084074a518407265284072d80882720"
)
#: The state of that table when round 1 was over (format 2).
ROUND_OVER_BEFORE_RULE_SETS = bytes.fromhex(
    "0208636f6d7061742d311f03960103416e610342656e0643686c6fc3a90644c3a964c3a9020123456789abcd"
    "ef0123456789abcdefb0ea018827904e001a01010180809010008080800880c080021776731ad5eeb0456908"
    "84610a9040c399c90e3254a39dec06040100500000090201010101011a021a0c0280809010008080800880c0"
    "80021ac8e2010006011b0100"
)
#: Its last state, round 2 in play (format 2).
IN_PLAY_BEFORE_RULE_SETS = bytes.fromhex(
    "0208636f6d7061742d312602960103416e610342656e0643686c6fc3a90644c3a964c3a9020123456789abcd"
    "ef0123456789abcdefb0ea018827904e001a0102028669c18081079080c4608080aa1806d18de8831b590201"
    "000000000000040021ecd302000603080102"
)


def test_a_state_stored_before_rule_sets_decodes_to_the_classic_rule_set() -> None:
    state = decode_state(ROUND_OVER_BEFORE_RULE_SETS)
    assert state.rules == CLASSIC
    assert (state.version, state.phase, state.target, state.scores) == (
        31,
        Phase.ROUND_OVER,
        150,
        (0, 26),
    )
    assert state.names == ("Ana", "Ben", "Chloé", "Dédé")
    assert state.last_result is not None and state.last_result.team_pips == (26, 12)
    assert state.round is not None and state.round.stock == () and state.round.aside == 0


def test_a_classic_state_still_encodes_to_the_bytes_stored_before_rule_sets() -> None:
    for stored in (ROUND_OVER_BEFORE_RULE_SETS, IN_PLAY_BEFORE_RULE_SETS):
        assert encode_state(decode_state(stored)) == stored


def test_a_command_log_stored_before_rule_sets_replays_to_its_stored_classic_state() -> None:
    entries = decode_log(LOG_BEFORE_RULE_SETS)
    assert all(getattr(c, "rules", CLASSIC) == CLASSIC for c, _ in entries[:1])
    state = replay(entries)
    assert state == decode_state(IN_PLAY_BEFORE_RULE_SETS)
    assert state.rules == CLASSIC
    assert encode_log(entries) == LOG_BEFORE_RULE_SETS

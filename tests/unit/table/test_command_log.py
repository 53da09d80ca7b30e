"""The binary command log: every command round-trips with its time, whole games replay from
it bit for bit, it stays small, and bytes that are not a log raise ``LogFormatError``."""

from __future__ import annotations

import random
import statistics
from typing import Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.rules import (
    CLASSIC,
    AnswerEnd,
    Command,
    Create,
    Draw,
    Expire,
    Join,
    Leave,
    LogEntry,
    Pass,
    Phase,
    Play,
    ProposeEnd,
    SetPresence,
    SetTarget,
    Start,
    Timing,
    preset,
    replay,
)
from services.rules.options import TableOptions
from services.rules.state import End
from services.table.command_log import LogFormatError, decode_log, encode_entry, encode_log
from testing.games import EPOCH_MS, TIMING, drive, new_game

SEEDS = st.integers(min_value=0, max_value=2**128 - 1)

#: One entry of every kind, with awkward values, at strictly increasing times.
EVERY_KIND: list[LogEntry] = [
    (Create("Qm9uam91ciBsZXMgYW1pcw", "Zoé 🁫", 500, Timing(45_000, 5_000, 10_000)), EPOCH_MS),
    (Join("李小龙"), EPOCH_MS + 1),
    (Join("B"), EPOCH_MS + 200),
    (Leave(1), EPOCH_MS + 20_000),
    (SetTarget(0, 150), EPOCH_MS + 20_001),
    (Start(0, 2**128 - 1), EPOCH_MS + 30_000),
    (Play(3, 27, int(End.RIGHT)), EPOCH_MS + 74_999),
    (Pass(2), EPOCH_MS + 80_000),
    (SetPresence(1, False), EPOCH_MS + 80_500),
    (SetPresence(1, True), EPOCH_MS + 81_000),
    (Expire(300), EPOCH_MS + 126_000),
    (Draw(3), EPOCH_MS + 126_500),  # not Draw(2): it would equal Pass(2) as a tuple
    (ProposeEnd(0), EPOCH_MS + 127_000),  # issue 20; not (1): it would equal Leave(1)
    (AnswerEnd(0, True), EPOCH_MS + 127_001),
    (AnswerEnd(3, False), EPOCH_MS + 127_002),
]
#: A create entry of a table with options (issue 20): robots, friendly end, count aid.
OPTIONS_CREATE: Final = Create(
    "Qm9uam91ciBsZXMgYW1pcw",
    "Zoé",
    100,
    Timing(45_000, 5_000, 10_000),
    preset("site", seats=4, teams=True),
    TableOptions((1, 2, 3), 2, 3, 240_000, True, 20_000, True),
)
#: A create entry of a table with another rule set (D9): its rule set is in the log.
SITE_CREATE: Final = Create(
    "Qm9uam91ciBsZXMgYW1pcw",
    "Zoé",
    200,
    Timing(45_000, 5_000, 10_000),
    preset("site", seats=3, turn_seconds=20),
)


def _entry_sizes(entries: list[LogEntry]) -> list[int]:
    sizes, previous = [], 0
    for command, at_ms in entries:
        sizes.append(len(encode_entry(command, at_ms, previous)))
        previous = at_ms
    return sizes


def test_an_empty_log_decodes_to_no_entries() -> None:
    assert encode_log([]) == b""
    assert decode_log(b"") == []


def test_every_command_kind_round_trips_with_its_time() -> None:
    assert decode_log(encode_log(EVERY_KIND)) == EVERY_KIND


@pytest.mark.parametrize(
    "entry",
    [
        (Start(0, 0), 5),
        (Start(0, 1), 5),
        (Start(0, 2**128 - 1), 5),
        (Start(0, 2**127), 5),
        (Join("é"), 0),
        (Join("Ωμέγα 戴 🂡"), 0),
        (Join("x" * 200), 0),  # a text longer than 127 bytes needs a two-byte length
        (Create("t", "🂡" * 24, 50, Timing(1, 0, 2**40)), 0),
        (Create("é" * 40, "Host", 100, Timing()), 2**62),
        (Expire(0), 1),
        (Expire(127), 1),
        (Expire(128), 1),
        (Expire(16_383), 1),
        (Expire(16_384), 1),
        (Expire(2**31 + 5), 1),
        (SetTarget(0, 500), 1),
        (Play(0, 0, int(End.LEFT)), 0),
        (Pass(3), 2**63 - 1),
        (Leave(3), 127),
        (Leave(2), 128),
    ],
    ids=repr,
)
def test_edge_values_round_trip(entry: LogEntry) -> None:
    entries = [entry, (Pass(1), entry[1] + 1)]
    assert decode_log(encode_log(entries)) == entries


@pytest.mark.parametrize("seat", range(4))
def test_every_play_of_every_seat_round_trips(seat: int) -> None:
    entries: list[LogEntry] = [
        (Play(seat, tile, end), 1_000 * tile + end)
        for tile in range(28)
        for end in (int(End.LEFT), int(End.RIGHT))
    ]
    assert decode_log(encode_log(entries)) == entries


def test_entries_at_the_same_millisecond_keep_their_time() -> None:
    entries: list[LogEntry] = [(Pass(0), 7_000), (Pass(1), 7_000), (Pass(2), 7_000)]
    assert decode_log(encode_log(entries)) == entries
    assert _entry_sizes(entries)[1:] == [2, 2]  # tag + a one-byte dt of 0


def test_times_are_stored_as_deltas_so_later_entries_stay_short() -> None:
    entries: list[LogEntry] = [(Pass(0), EPOCH_MS), (Pass(1), EPOCH_MS + 100)]
    first, second = _entry_sizes(entries)
    assert first == 1 + 6  # an absolute epoch time in ms needs a six-byte varint
    assert second == 2


def test_entry_tags_follow_the_documented_layout_kind_then_seat() -> None:
    tags = {command: encode_entry(command, 0, 0)[0] for command, _ in EVERY_KIND}
    assert tags[Join("B")] == 0x10
    assert tags[Leave(1)] == 0x21
    assert tags[SetTarget(0, 150)] == 0x30
    assert tags[Start(0, 2**128 - 1)] == 0x40
    assert tags[Play(3, 27, int(End.RIGHT))] == 0x53
    assert tags[Pass(2)] == 0x62
    assert tags[SetPresence(1, True)] == 0x71
    assert tags[Expire(300)] == 0x80
    assert tags[Draw(3)] == 0x93
    assert tags[ProposeEnd(0)] == 0xA0
    assert tags[AnswerEnd(3, False)] == 0xB3
    assert encode_entry(EVERY_KIND[0][0], 0, 0)[0] == 0x00
    assert encode_entry(SITE_CREATE, 0, 0)[0] == 0x1F
    assert encode_entry(OPTIONS_CREATE, 0, 0)[0] == 0x2F


def test_a_table_with_options_keeps_them_in_the_log_issue_20() -> None:
    entries: list[LogEntry] = [(OPTIONS_CREATE, EPOCH_MS), (Start(0, 7), EPOCH_MS + 3)]
    assert decode_log(encode_log(entries)) == entries
    classic_aid = Create("Qm9uam91ciBsZXMgYW1pcw", "Zoé", options=TableOptions(count_aid=True))
    decoded = decode_log(encode_log([(classic_aid, EPOCH_MS)]))[0][0]
    assert decoded == classic_aid and isinstance(decoded, Create)
    assert decoded.rules is CLASSIC


def test_a_table_of_another_rule_set_keeps_its_rule_set_in_the_log() -> None:
    """D9: the rule set chosen at creation is replayed with the table; a classic create
    entry stays the same bytes as before rule sets existed."""
    log = encode_log(
        [(SITE_CREATE, EPOCH_MS), (Join("Bob"), EPOCH_MS + 5), (Draw(1), EPOCH_MS + 9)]
    )
    assert decode_log(log) == [
        (SITE_CREATE, EPOCH_MS),
        (Join("Bob"), EPOCH_MS + 5),
        (Draw(1), EPOCH_MS + 9),
    ]
    classic = EVERY_KIND[0][0]
    assert isinstance(classic, Create) and classic.rules == CLASSIC
    decoded = decode_log(encode_log([(classic, EPOCH_MS)]))[0][0]
    assert isinstance(decoded, Create) and decoded.rules == CLASSIC
    assert encode_entry(classic, 0, 0) == encode_entry(classic._replace(rules=CLASSIC), 0, 0)
    with pytest.raises(LogFormatError, match="rule set"):
        decode_log(b"\x1f" + encode_entry(classic, 0, 0)[1:] + b"\x02\xff\xff")


def test_a_play_costs_four_bytes_within_sixteen_seconds_of_the_previous_entry() -> None:
    assert len(encode_entry(Play(2, 13, int(End.LEFT)), 16_383, 0)) == 3 + 1
    assert len(encode_entry(Play(2, 13, int(End.LEFT)), 16_384, 0)) == 4 + 1
    assert encode_entry(Play(1, 27, int(End.RIGHT)), 0, 0) == bytes((0x51, 0x00, 27 << 2 | 2))


def test_appending_entry_by_entry_is_the_same_log_as_encoding_it_whole() -> None:
    out, previous = b"", 0
    for command, at_ms in EVERY_KIND:
        out += encode_entry(command, at_ms, previous)
        previous = at_ms
    assert out == encode_log(EVERY_KIND)


def test_encoding_something_that_is_not_a_command_is_a_type_error() -> None:
    with pytest.raises(TypeError):
        encode_entry(("Play", 1, 2), 0, 0)  # type: ignore[arg-type]


# --- whole games --------------------------------------------------------------------------


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=SEEDS, data=st.data())
def test_replaying_a_decoded_log_rebuilds_the_final_state_bit_for_bit(
    seed: int, data: st.DataObject
) -> None:
    game = new_game(seed)

    def randint(low: int, high: int) -> int:
        return data.draw(st.integers(min_value=low, max_value=high))

    drive(game, randint, max_steps=400)
    decoded = decode_log(encode_log(game.log))
    assert decoded == game.log
    assert replay(decoded) == game.state
    for version in (2, len(game.log) // 2, len(game.log)):  # any prefix is a past version
        assert replay(decoded[:version]) == game.states[version - 1]


def test_a_typical_game_to_100_encodes_in_well_under_2_kb() -> None:
    sizes = []
    for number in range(40):
        rng = random.Random(number)
        game = new_game(rng.getrandbits(128), 100)
        # People take a few seconds a move; time-outs and dropped connections are rare.
        drive(game, rng.randint, max_steps=5_000, max_dt=8_000, expire_pct=2, presence_pct=1)
        assert game.state.phase is Phase.FINISHED
        sizes.append(len(encode_log(game.log)))
    assert statistics.median(sizes) < 1_200
    assert max(sizes) < 2_048


def test_the_game_timing_survives_the_log() -> None:
    (create_cmd, _), *_ = decode_log(encode_log(new_game(1).log))
    assert isinstance(create_cmd, Create)
    assert create_cmd.timing == TIMING


# --- malformed logs -------------------------------------------------------------------------


def test_a_log_cut_inside_any_entry_is_rejected() -> None:
    data = encode_log(EVERY_KIND)
    boundaries, position = {0}, 0
    for size in _entry_sizes(EVERY_KIND):
        position += size
        boundaries.add(position)
    assert position == len(data)
    for cut in range(1, len(data)):
        if cut in boundaries:
            assert len(decode_log(data[:cut])) == sorted(boundaries).index(cut)
        else:
            with pytest.raises(LogFormatError):
                decode_log(data[:cut])


@pytest.mark.parametrize("kind", range(0xC, 0x10))
@pytest.mark.parametrize("seat", [0, 3, 15])
def test_an_unknown_entry_tag_is_rejected(kind: int, seat: int) -> None:
    valid = encode_log(EVERY_KIND[:2])
    with pytest.raises(LogFormatError, match="unknown entry tag"):
        decode_log(bytes((kind << 4 | seat, 0x00, 0x00)))
    with pytest.raises(LogFormatError, match="unknown entry tag"):
        decode_log(valid + bytes((kind << 4 | seat, 0x00)) + valid)


@pytest.mark.parametrize(
    "data",
    [
        b"\x60" + b"\x80" * 11 + b"\x01",  # dt
        b"\x60" + b"\xff" * 40 + b"\x00",  # dt
        b"\x80\x00" + b"\x80" * 12 + b"\x01",  # Expire's turn number
        b"\x10\x00" + b"\xff" * 20 + b"\x01A",  # a text length
    ],
)
def test_an_overlong_varint_is_rejected(data: bytes) -> None:
    with pytest.raises(LogFormatError, match="varint too long"):
        decode_log(data)


def test_a_varint_that_never_ends_is_rejected() -> None:
    with pytest.raises(LogFormatError):
        decode_log(b"\x60" + b"\x80" * 5)


@pytest.mark.parametrize(
    "data",
    [
        b"\x10\x00\x02\xff\xfe",  # Join: not UTF-8 at all
        b"\x10\x00\x01\xc3",  # Join: a two-byte sequence cut short
        b"\x10\x00\x03\xed\xa0\x80",  # Join: an encoded surrogate
        b"\x00\x00\x01t\x02\xc0\xaf\x01\x01\x01\x01",  # Create: an overlong "/" as host name
        b"\x00\x00\x01\x80\x01A\x01\x01\x01\x01",  # Create: table id a lone continuation byte
    ],
)
def test_text_that_is_not_utf8_is_rejected(data: bytes) -> None:
    with pytest.raises(LogFormatError, match="bad text"):
        decode_log(data)


def test_a_text_longer_than_the_log_is_rejected() -> None:
    with pytest.raises(LogFormatError):
        decode_log(b"\x10\x00\x05abc")


def test_a_malformed_entry_after_valid_ones_is_rejected() -> None:
    valid = encode_log(EVERY_KIND)
    with pytest.raises(LogFormatError):
        decode_log(valid + b"\x40\x00" + bytes(15))  # Start with a 15-byte seed


def _round_trip(command: Command) -> Command:
    ((decoded, _),) = decode_log(encode_entry(command, 0, 0))
    return decoded


def test_presence_round_trips_as_a_bool() -> None:
    assert _round_trip(SetPresence(2, True)) == SetPresence(2, True)
    assert _round_trip(SetPresence(2, False)) == SetPresence(2, False)
    decoded = _round_trip(SetPresence(2, True))
    assert isinstance(decoded, SetPresence)
    assert decoded.connected is True

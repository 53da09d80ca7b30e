"""The table's command log in Redis: a compact binary append-only record of accepted commands.

Every accepted command that changed the table is appended as one entry to the log chunks of
the table's hash (64-byte fields, filled in order, in the same atomic step as the state);
the engine's ``replay`` over the decoded entries rebuilds the table bit for bit (a test and
the chaos suite check it). Entry layout:

``tag`` (1 byte: kind << 4 | seat), ``dt`` (unsigned LEB128 varint: ms since the previous
entry, absolute ms for the first), then the payload of the kind:

| kind | tag | payload |
|---|---|---|
| Create | 0x00 | varint-prefixed UTF-8 table id, host name; varints target, turn, away, break |
| Create (rule set) | 0x1F | as Create, then the varint-prefixed ``codec.encode_rules`` bytes |
| Create (options) | 0x2F | as 0x1F, then the varint-prefixed ``codec.encode_options`` bytes |
| Join | 0x10 | varint-prefixed UTF-8 name |
| Leave | 0x2s | - |
| SetTarget | 0x3s | varint target |
| Start | 0x4s | 16 bytes seed, big-endian |
| Play | 0x5s | 1 byte ``tile << 2 | end`` (the end's two bits; 0 is END_DOWN, all fives only) |
| Pass | 0x6s | - |
| SetPresence | 0x7s | 1 byte connected (0/1) |
| Expire | 0x8_ | varint turn number |
| Draw | 0x9s | - |
| ProposeEnd | 0xAs | - |
| AnswerEnd | 0xBs | 1 byte accept (0/1) |

A play costs about 4 bytes, so a whole game to 100 fits in about 1 KB.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

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
    Play,
    ProposeEnd,
    SetPresence,
    SetTarget,
    Start,
    Timing,
)
from services.rules.binary import DecodeError, Reader, text, varint
from services.rules.codec import (
    CodecError,
    decode_options,
    decode_rules,
    encode_options,
    encode_rules,
)
from services.rules.options import NO_OPTIONS
from services.rules.state import End


class LogFormatError(DecodeError):
    """Bytes that are not a command log."""


#: The tag (kind << 4) of each command that is a seat and nothing more.
_SEAT_ONLY: dict[type, int] = {Leave: 0x20, Pass: 0x60, Draw: 0x90, ProposeEnd: 0xA0}


def encode_entry(command: Command, at_ms: int, previous_ms: int) -> bytes:
    """One log entry for ``command`` accepted at ``at_ms``; ``previous_ms`` is the previous
    entry's time (0 for the first entry)."""
    dt = varint(max(at_ms - previous_ms, 0))
    if isinstance(command, Play):
        return bytes((0x50 | command.seat,)) + dt + bytes((command.tile << 2 | command.end & 3,))
    seat_only = _SEAT_ONLY.get(type(command))
    if seat_only is not None:  # a seat's command without a payload
        return bytes((seat_only | command.seat,)) + dt  # type: ignore[union-attr]
    if isinstance(command, Expire):
        return b"\x80" + dt + varint(command.turn_number)
    if isinstance(command, SetPresence):
        return bytes((0x70 | command.seat,)) + dt + (b"\x01" if command.connected else b"\x00")
    if isinstance(command, Join):
        return b"\x10" + dt + text(command.name)
    if isinstance(command, SetTarget):
        return bytes((0x30 | command.seat,)) + dt + varint(command.target)
    if isinstance(command, Start):
        return bytes((0x40 | command.seat,)) + dt + command.seed.to_bytes(16, "big")
    if isinstance(command, AnswerEnd):
        return bytes((0xB0 | command.seat,)) + dt + (b"\x01" if command.accept else b"\x00")
    if isinstance(command, Create):
        return _create_entry(command, dt)
    raise TypeError(f"not a command: {command!r}")


def _create_entry(command: Create, dt: bytes) -> bytes:
    """A create entry: 0x00 for classic, 0x1F with a rule set, 0x2F with options too."""
    t = command.timing
    optioned = command.options != NO_OPTIONS
    classic = command.rules == CLASSIC and not optioned
    rules = b"" if classic else _prefixed(encode_rules(command.rules))
    options = _prefixed(encode_options(command.options)) if optioned else b""
    return (
        (b"\x2f" if optioned else b"\x00" if classic else b"\x1f")
        + dt
        + text(command.table_id)
        + text(command.host_name)
        + b"".join(varint(v) for v in (command.target, t.turn_ms, t.away_ms, t.break_ms))
        + rules
        + options
    )


def _presence(reader: Reader, seat: int) -> SetPresence:
    flag = reader.byte()
    if flag > 1:
        raise LogFormatError(f"bad presence flag {flag}")
    return SetPresence(seat, flag == 1)


def _answer(reader: Reader, seat: int) -> AnswerEnd:
    flag = reader.byte()
    if flag > 1:
        raise LogFormatError(f"bad answer flag {flag}")
    return AnswerEnd(seat, flag == 1)


def _play(reader: Reader, seat: int) -> Play:
    packed = reader.byte()
    return Play(seat, packed >> 2, packed & 3 or int(End.DOWN))


#: The decoder of each entry kind (the tag's high nibble), given the reader and the seat.
_DECODERS: dict[int, Callable[[Reader, int], Command]] = {
    0x0: lambda reader, _: _create(reader, with_rules=False),
    0x1: lambda reader, _: Join(reader.text()),
    0x2: lambda _, seat: Leave(seat),
    0x3: lambda reader, seat: SetTarget(seat, reader.varint()),
    0x4: lambda reader, seat: Start(seat, int.from_bytes(reader.raw(16), "big")),
    0x5: _play,
    0x6: lambda _, seat: Pass(seat),
    0x7: _presence,
    0x8: lambda reader, _: Expire(reader.varint()),
    0x9: lambda _, seat: Draw(seat),
    0xA: lambda _, seat: ProposeEnd(seat),
    0xB: _answer,
}


def decode_log(data: bytes) -> list[LogEntry]:
    """Every ``(command, at_ms)`` of a log, in order; ``LogFormatError`` if malformed."""
    reader = Reader(data, LogFormatError)
    entries: list[LogEntry] = []
    at_ms = 0
    while not reader.at_end:
        tag = reader.byte()
        at_ms += reader.varint()
        if tag in (0x1F, 0x2F):
            command: Command = _create(reader, with_rules=True, with_options=tag == 0x2F)
        else:
            decoder = _DECODERS.get(tag >> 4)
            if decoder is None:
                raise LogFormatError(f"unknown entry tag {tag:#x}")
            command = decoder(reader, tag & 0x0F)
        entries.append((command, at_ms))
    return entries


def _prefixed(data: bytes) -> bytes:
    return varint(len(data)) + data


def _create(reader: Reader, *, with_rules: bool, with_options: bool = False) -> Create:
    table_id, host = reader.text(), reader.text()
    target, turn, away, pause = (reader.varint() for _ in range(4))
    rules, options = CLASSIC, NO_OPTIONS
    try:
        if with_rules:
            rules = decode_rules(reader.raw(reader.varint()))
            if rules == CLASSIC:
                rules = CLASSIC
        if with_options:
            options = decode_options(reader.raw(reader.varint()))
    except CodecError as exc:
        raise LogFormatError(f"bad rule set or options in a create entry: {exc}") from exc
    return Create(table_id, host, target, Timing(turn, away, pause), rules, options)


def encode_log(entries: Iterable[LogEntry]) -> bytes:
    """A whole log (used by tests and tools; the service appends entry by entry)."""
    out = bytearray()
    previous = 0
    for command, at_ms in entries:
        out += encode_entry(command, at_ms, previous)
        previous = at_ms
    return bytes(out)

"""Byte-level helpers of the compact encodings: unsigned LEB128 varints and a bounds-checked
reader. Shared by the state codec and the service's command log."""

from __future__ import annotations

from typing import Final


class DecodeError(ValueError):
    """Bytes that do not decode (truncated, overlong or malformed)."""


def _encoded(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


#: Values below this are encoded by a lookup (one or two bytes: tile indexes, counts, scores,
#: versions of most tables); the rest byte by byte.
_TABULATED: Final = 1 << 12
_SMALL: Final = tuple(_encoded(value) for value in range(_TABULATED))


def varint(value: int) -> bytes:
    """``value`` (>= 0) as an unsigned LEB128 varint."""
    if 0 <= value < _TABULATED:
        return _SMALL[value]
    if value < 0:
        raise ValueError("varints are unsigned")
    return _encoded(value)


def text(value: str) -> bytes:
    """UTF-8 text prefixed with its byte length."""
    data = value.encode()
    return varint(len(data)) + data


class Reader:
    """Reads bytes in order; raises ``error`` (a ``DecodeError`` subclass) on malformed input."""

    def __init__(self, data: bytes, error: type[DecodeError] = DecodeError) -> None:
        self.data = data
        self.pos = 0
        self.error = error

    @property
    def at_end(self) -> bool:
        """Whether every byte was read."""
        return self.pos >= len(self.data)

    def byte(self) -> int:
        """One byte."""
        if self.pos >= len(self.data):
            raise self.error("truncated data")
        value = self.data[self.pos]
        self.pos += 1
        return value

    def varint(self) -> int:
        """One unsigned LEB128 varint (at most 10 bytes)."""
        shift = value = 0
        while True:
            byte = self.byte()
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
            shift += 7
            if shift > 70:
                raise self.error("varint too long")

    def raw(self, size: int) -> bytes:
        """``size`` bytes."""
        if self.pos + size > len(self.data):
            raise self.error("truncated data")
        value = self.data[self.pos : self.pos + size]
        self.pos += size
        return value

    def text(self) -> str:
        """Length-prefixed UTF-8 text."""
        try:
            return self.raw(self.varint()).decode()
        except UnicodeDecodeError as exc:
            raise self.error("bad text") from exc

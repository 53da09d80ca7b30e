"""Invitation codes, table ids and seat tokens (S1, D6, D7).

- **Invitation codes**: 10 characters of a 30-character unambiguous alphabet (no 0/O, 1/I/L,
  U): 30**10 ≈ 5.9e14 codes (9.2e12 per shard, where a table's code is drawn). Typed codes
  are normalised (upper case, spaces and dashes removed).
- **Table ids**: 16 random bytes, URL-safe base64 without padding (22 characters).
- **Seat tokens**: ``base64url(HMAC-SHA256(secret, "<table_id>:<seat>:<nonce>"))`` where
  ``nonce`` is 16 random bytes drawn when the seat is taken; the token has 256 bits no one
  can compute without the secret. Redis stores only the nonce and ``SHA-256(token)`` (raw);
  the token itself is never stored. Deriving
  it from the nonce lets a retried create/join (same request id) return the same token
  without storing it. Verification compares the SHA-256 in constant time.
- **Seat holders**: 8 bytes per seat naming who holds it, ``SHA-256("dominos.v1 seat holder"
  NUL SHA-256(token))[:8]``, published with every table version so gateways can end the view
  streams of a token whose seat was freed. A one-way function of the token: not a credential.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from typing import Final

CODE_ALPHABET: Final = "ABCDEFGHJKMNPQRSTVWXYZ23456789"
CODE_LENGTH: Final = 10
TABLE_ID_LENGTH: Final = 22
_CODE_RE: Final = re.compile(f"[{CODE_ALPHABET}]{{{CODE_LENGTH}}}")
_TABLE_ID_RE: Final = re.compile(r"[A-Za-z0-9_-]{22}")
_TOKEN_RE: Final = re.compile(r"[A-Za-z0-9_-]{43}")


def new_table_id() -> str:
    """A fresh random table id (128 bits)."""
    return base64.urlsafe_b64encode(secrets.token_bytes(16)).rstrip(b"=").decode()


def is_table_id(value: str) -> bool:
    """Whether ``value`` has the shape of a table id."""
    return bool(_TABLE_ID_RE.fullmatch(value))


def new_code() -> str:
    """A fresh random invitation code."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalise_code(typed: str) -> str | None:
    """The code a player typed, upper-cased without spaces or dashes; None if it cannot be one."""
    code = re.sub(r"[\s-]", "", typed).upper()
    return code if _CODE_RE.fullmatch(code) else None


def new_nonce() -> str:
    """A fresh seat nonce (16 random bytes, hex): with the server secret, it fixes the token."""
    return secrets.token_hex(16)


def seat_token(secret: bytes, table_id: str, seat: int, nonce: str) -> str:
    """The seat token derived from the server secret and the seat's nonce (43 characters)."""
    mac = hmac.new(secret, f"{table_id}:{seat}:{nonce}".encode(), hashlib.sha256).digest()
    return base64.urlsafe_b64encode(mac).rstrip(b"=").decode()


def token_hash(token: str) -> str:
    """SHA-256 of a token, hex."""
    return hashlib.sha256(token.encode()).hexdigest()


def token_digest(token: str) -> bytes:
    """SHA-256 of a token, 32 raw bytes: what Redis stores."""
    return hashlib.sha256(token.encode()).digest()


HOLDER_SIZE: Final = 8
NO_HOLDER: Final = bytes(HOLDER_SIZE)
_HOLDER_DOMAIN: Final = b"dominos.v1 seat holder\0"


#: Holder values by digest, made once (every commit names its table's four holders); a
#: bound, cleared when full.
_HOLDER_TAGS: dict[bytes, bytes] = {}
_HOLDER_TAGS_KEPT: Final = 65_536


def holder_tag(digest: bytes) -> bytes:
    """The seat-holder value of a token, from its stored digest (:func:`token_digest`)."""
    tag = _HOLDER_TAGS.get(digest)
    if tag is None:
        if len(_HOLDER_TAGS) >= _HOLDER_TAGS_KEPT:
            _HOLDER_TAGS.clear()
        tag = _HOLDER_TAGS[digest] = hashlib.sha256(_HOLDER_DOMAIN + digest).digest()[:HOLDER_SIZE]
    return tag


def token_holder(token: str) -> bytes:
    """The seat-holder value of a token (what a gateway binds a view stream to)."""
    return holder_tag(token_digest(token))


def seat_holders(digests: tuple[bytes | None, ...]) -> bytes:
    """The seat holders of a table: per seat the holder value of its token's digest, or
    :data:`NO_HOLDER` for a seat nobody holds (``None``)."""
    return b"".join(NO_HOLDER if d is None else holder_tag(d) for d in digests)


def holder_of(holders: bytes, seat: int) -> bytes:
    """Seat ``seat``'s value in :func:`seat_holders` bytes (``NO_HOLDER`` when absent)."""
    value = holders[seat * HOLDER_SIZE : (seat + 1) * HOLDER_SIZE]
    return value if len(value) == HOLDER_SIZE else NO_HOLDER


def is_token_shape(token: str) -> bool:
    """Whether ``token`` has the shape of a seat token (cheap check before any lookup)."""
    return bool(_TOKEN_RE.fullmatch(token))


def same_hash(a: str | bytes, b: str | bytes) -> bool:
    """Constant-time equality of two hashes (hex strings or raw digests)."""
    left = a.encode() if isinstance(a, str) else a
    right = b.encode() if isinstance(b, str) else b
    return hmac.compare_digest(left, right)

"""The seat token travels in exactly one documented form, ``authorization: Bearer <token>``
(issue 17): any other form reads as no token (the call gets UNAUTHENTICATED / TOKEN_MISSING)."""

from __future__ import annotations

from typing import Any

import pytest

from services.gateway.servicer import bearer_token

TOKEN = "AbCdEfGhIjKlMnOpQrStUvWxYz0123456789-_abcde"


class Context:
    def __init__(self, *metadata: tuple[str, Any]) -> None:
        self.metadata = metadata

    def invocation_metadata(self) -> tuple[tuple[str, Any], ...]:
        return self.metadata


def test_the_documented_form_gives_the_token() -> None:
    assert bearer_token(Context(("authorization", f"Bearer {TOKEN}"))) == TOKEN
    assert bearer_token(Context(("authorization", f"Bearer {TOKEN}".encode()))) == TOKEN


@pytest.mark.parametrize(
    "value",
    [
        TOKEN,  # no scheme
        f"bearer {TOKEN}",  # another spelling of the scheme
        f"BEARER {TOKEN}",
        f"Basic {TOKEN}",
        f"Bearer  {TOKEN}",  # two spaces
        f"Bearer {TOKEN} extra",
        "Bearer ",
        "Bearer",
        "",
    ],
)
def test_any_other_form_is_no_token(value: str) -> None:
    assert bearer_token(Context(("authorization", value))) == ""


def test_no_authorization_is_no_token() -> None:
    assert bearer_token(Context(("x-other", f"Bearer {TOKEN}"))) == ""

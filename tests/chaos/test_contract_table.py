"""The chaos suite's table of documented errors (``contract.RPC_ERRORS``, written by hand) says
no more than ``gateway.proto``: every reason it allows an RPC appears in that RPC's "Errors:"
comment, or in the comment of the RPC it refers to ("as LeaveTable, plus ..."), or is one of
the errors the file comment documents for every call. A fuzzer judging statuses against a
table looser than the contract could not catch an undocumented status."""

from __future__ import annotations

import re

from .contract import PROTOS, REASON_CODES, RPC_ERRORS, commented_lines

#: Reasons gateway.proto's file comment documents for every command.
_EVERY_CALL = {"REQUEST_ID_REUSED", "UNAVAILABLE"}


def rpc_comments() -> dict[str, str]:
    """The comment above each ``rpc`` of DominosService, joined into one line."""
    comments: dict[str, str] = {}
    for line, comment in commented_lines("gateway.proto"):
        match = re.match(r"rpc (\w+)\(", line)
        if match:
            comments[match.group(1)] = " ".join(comment)
    return comments


def documented_reasons(rpc: str, comments: dict[str, str]) -> set[str]:
    """The reasons named in ``rpc``'s comment and in those of the RPCs it refers to."""
    text = comments[rpc]
    reasons = {r for r in REASON_CODES if re.search(rf"\b{r}\b", text)}
    for base in re.findall(r"\bas (\w+)", text):
        if base in comments and base != rpc:
            reasons |= documented_reasons(base, comments)
    return reasons


def test_every_reason_the_fuzzer_accepts_is_documented_in_gateway_proto() -> None:
    comments = rpc_comments()
    assert set(RPC_ERRORS) == set(comments)
    loose = {
        rpc: sorted(
            {r for rs in table.values() for r in rs}
            - documented_reasons(rpc, comments)
            - _EVERY_CALL
        )
        for rpc, table in RPC_ERRORS.items()
    }
    assert not {rpc: extra for rpc, extra in loose.items() if extra}


def test_the_file_comment_documents_unavailable_for_every_call() -> None:
    text = (PROTOS / "gateway.proto").read_text()
    assert "any call may end with UNAVAILABLE (reason UNAVAILABLE" in " ".join(
        line.strip().lstrip("/").strip() for line in text.splitlines()
    )

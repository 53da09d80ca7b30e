"""``services.common.redis_wire.pack``: hiredis's C packer and the Python one write the same
bytes for every argument either takes (issue 22), and what hiredis refuses by its exact type
is still packed or refused as redis-py would."""

from __future__ import annotations

import enum
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from redis.exceptions import DataError

from services.common import redis_wire
from services.common.redis_wire import _python_pack, pack

_ARGS = st.one_of(
    st.binary(max_size=80),
    st.text(max_size=40),
    st.integers(min_value=-(2**80), max_value=2**80),
    st.floats(allow_nan=False),
)


@given(st.lists(_ARGS, min_size=1, max_size=40))
def test_the_c_packer_writes_what_the_python_packer_writes(command: list[Any]) -> None:
    assert pack(command) == pack(tuple(command)) == _python_pack(command)


def test_the_c_packer_is_the_one_in_use() -> None:
    """redis[hiredis] is a dependency: the commit's and the sweeps' commands are packed in C."""
    assert redis_wire._c_pack is not None


class _Kind(enum.IntEnum):
    TURN = 3


def test_an_int_enum_hiredis_refuses_is_packed_as_its_number() -> None:
    assert pack(("ZADD", "k", _Kind.TURN, "m")) == pack(("ZADD", "k", 3, "m"))


@pytest.mark.parametrize("value", [True, False, None, [1], bytearray(b"x")])
def test_what_redis_py_refuses_is_refused_whichever_packer_runs(value: Any) -> None:
    with pytest.raises(DataError, match="Redis argument"):
        pack(("SET", "k", value))

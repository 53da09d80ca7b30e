"""``use_poller_io``: the gRPC experiments every entry point sets (issue 22)."""

from __future__ import annotations

import sys

import grpc

from services.common.grpc_io import POLLER_IO_EXPERIMENTS, use_poller_io


def test_use_poller_io_sets_the_experiments_when_the_environment_has_none() -> None:
    env: dict[str, str] = {}
    use_poller_io(env)
    assert env == {"GRPC_EXPERIMENTS": POLLER_IO_EXPERIMENTS}


def test_use_poller_io_keeps_an_operators_value_even_an_empty_one() -> None:
    for given in ("", "some_experiment"):
        env = {"GRPC_EXPERIMENTS": given}
        assert use_poller_io(env) is False
        assert env == {"GRPC_EXPERIMENTS": given}


def test_use_poller_io_reports_no_effect_once_grpc_is_imported() -> None:
    assert grpc.__name__ in sys.modules  # this test process has gRPC loaded already
    env: dict[str, str] = {}
    assert use_poller_io(env) is False
    assert env["GRPC_EXPERIMENTS"] == POLLER_IO_EXPERIMENTS  # children still inherit it

"""Metrics endpoint: binds the requested (or a free) port, serves build info, can be disabled."""

from __future__ import annotations

import urllib.request
from collections.abc import Iterator

import pytest

from services.common.metrics import (
    DISABLED,
    set_build_info,
    start_metrics_server,
    stop_metrics_servers,
)


@pytest.fixture(autouse=True)
def _stop_servers() -> Iterator[None]:
    yield
    stop_metrics_servers()


def test_free_port_serves_build_info() -> None:
    set_build_info("metrics-test", version="1.2.3")
    port = start_metrics_server(0, addr="127.0.0.1")
    assert 0 < port < 65536
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        body = response.read().decode()
    assert 'dominos_build_info{service="metrics-test",version="1.2.3"} 1.0' in body


def test_default_version_is_the_package_version() -> None:
    set_build_info("metrics-default")
    port = start_metrics_server(0, addr="127.0.0.1")
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
        body = response.read().decode()
    line = next(b for b in body.splitlines() if 'service="metrics-default"' in b)
    assert 'version=""' not in line


def test_disabled_starts_nothing() -> None:
    assert start_metrics_server(DISABLED) == -1


def test_invalid_port_is_rejected() -> None:
    with pytest.raises(ValueError, match="-5"):
        start_metrics_server(-5)

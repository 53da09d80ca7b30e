"""``python -m bench.tls_bench``, briefly: the table service plays real moves against Redis and
NATS over TLS (certificates made for the run, the services verifying the servers against
their CA files) beside plain text, and both modes report every figure, so the TLS path of
every connection the table service opens works end to end and the benchmark cannot rot."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from testing.services import ROOT

PERCENTILES = ("p50", "p90", "p99", "p99.9", "max", "mean")


@pytest.mark.slow
def test_tls_bench_plays_over_tls_and_plain_text(tmp_path: Path) -> None:
    out = tmp_path / "tls.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.tls_bench",
            "--plays",
            "40",
            "--rounds",
            "2",
            "--tables",
            "2",
            "--json",
            str(out),
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "TLS cost at p50" in done.stdout
    figures = json.loads(out.read_text())
    for mode in ("plain", "tls"):
        for latency in ("rpc_ns", "event_ns"):
            summary = figures[mode][latency]
            assert set(PERCENTILES) <= set(summary)
            assert 0 < summary["p50"] <= summary["p99"] <= summary["max"]
    assert set(figures["tls_cost_p50_ms"]) == {"rpc_ns", "event_ns"}
    assert "80 commands per mode" in done.stdout

"""``python -m bench.lease_bench``, briefly: the gateway's lease keeper renews every lease it
holds once a period, a slice at a time (never more than one batch per call), against a Redis
of the bench's own with the production users, and the report carries every figure, so the
benchmark cannot rot."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from testing.services import ROOT


def test_lease_bench_renews_every_lease_once_a_period_in_slices(tmp_path: Path) -> None:
    out = tmp_path / "leases.json"
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "bench.lease_bench",
            "--leases",
            "400",
            "--ttl",
            "1.2",
            "--periods",
            "3",
            "--json",
            str(out),
        ],
        check=False,
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(out.read_text())
    assert results["leases"] == 400
    # Three periods of 16 ticks: about 400 renewals a period (the last tick may fall after
    # the probe), none of them larger than a slice's share.
    assert 350 <= results["leases_renewed_per_period"] <= 400
    assert results["renew_calls_per_period"] >= 10
    assert 0 < results["leases_per_call_max"] <= 250
    for window in ("quiet_ms", "renewing_ms"):
        assert set(results[window]) == {"p50", "p90", "p99", "p99.9", "max", "mean", "n"}
        assert results[window]["n"] > 100
    assert "renewal calls a period" in done.stdout

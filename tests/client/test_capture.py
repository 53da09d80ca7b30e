"""The screenshot of the terminal client (tests/client/capture.py) is taken from a real
mid-round table, and that table fits 80 x 24 (header, the four seats, chain, hand, Pass,
keys)."""

from __future__ import annotations

from pathlib import Path

from testing.cluster import ProcessCluster
from tests.client.capture import capture_mid_round


async def test_a_real_mid_round_table_fits_80_by_24_and_is_saved_as_svg(
    cluster: ProcessCluster, tmp_path: Path
) -> None:
    path = tmp_path / "shot.svg"
    shown = await capture_mid_round(cluster.gateways[0].address, path, min_chain=6)
    svg = path.read_text()
    assert svg.startswith("<svg") and "Ana (A, vous)" in svg.replace("&#160;", " ")
    lines = shown.splitlines()
    assert len(lines) <= 24 and all(len(line) <= 80 for line in lines)
    for words in ("Objectif 100", "Chloé (A, partenaire)", "Éric (B)", "Ben (B)", "Main :"):
        assert words in shown, (words, shown)
    assert "À vous de jouer" in shown

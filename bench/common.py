"""Helpers shared by the benchmarks: writing a run's figures as JSON. (Percentiles are in
``testing.stats``, the servers' binaries in ``testing.servers``.)"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any


def write_json(path: Path | None, figures: Any) -> None:
    """Write ``figures`` to ``path`` (its folder created) as indented JSON; nothing when None."""
    if path is None:
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(figures, indent=2) + "\n")

"""Compare two results of ``bench.load``: each figure side by side, with the ratio B / A.

Usage: ``python -m bench.compare A.json B.json [--all]``.

Two single runs are compared whatever their number of tables; otherwise (a ramp has one step
per number of tables) the steps are matched by their number of tables, and figures of steps
only one file has are shown with the other side empty. Without ``--all``, the CPU and peak
memory rows of processes outside the cluster (generators, floor server, bench) are left out.
"""

from __future__ import annotations

import argparse
import json
import math
import signal
import sys
from pathlib import Path
from typing import Any

_BENCH_SIDE = ("generator", "floor_server", "bench")


def load(path: Path) -> dict[str, Any]:
    """A results file of ``bench.load``."""
    data: dict[str, Any] = json.loads(path.read_text())
    if "steps" not in data:
        raise SystemExit(f"{path}: not a bench.load result (no 'steps')")
    return data


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return None if math.isnan(value) else float(value)


def _format(value: float | None) -> str:
    if value is None:
        return "-"
    if value.is_integer() or abs(value) >= 100:
        return f"{value:.0f}"
    if abs(value) >= 1:
        return f"{value:.2f}"
    return f"{value:.3f}"


def _ratio(a: float | None, b: float | None) -> str:
    if a is None or b is None:
        return ""
    if a == 0:
        return "=" if b == 0 else "new"
    return f"{b / a:.2f}x"


def rows(a: dict[str, Any], b: dict[str, Any], everything: bool) -> list[tuple[str, ...]]:
    """One row per figure of every step: label, A, B, B/A."""
    if len(a["steps"]) == 1 and len(b["steps"]) == 1:  # two single runs: whatever their N
        steps_a, steps_b = {0: a["steps"][0]["figures"]}, {0: b["steps"][0]["figures"]}
    else:
        steps_a = {int(s["tables"]): s["figures"] for s in a["steps"]}
        steps_b = {int(s["tables"]): s["figures"] for s in b["steps"]}
    several = len(steps_a) > 1 or len(steps_b) > 1
    out: list[tuple[str, ...]] = []
    for tables in sorted(set(steps_a) | set(steps_b)):
        fa, fb = steps_a.get(tables, {}), steps_b.get(tables, {})
        for key in [*fa, *(k for k in fb if k not in fa)]:
            if not everything and any(part in key for part in _BENCH_SIDE) and "cpu_s_" in key:
                continue
            if not everything and "peak_rss" in key and any(p in key for p in _BENCH_SIDE):
                continue
            va, vb = _number(fa.get(key)), _number(fb.get(key))
            label = f"{tables} tables: {key}" if several else key
            out.append((label, _format(va), _format(vb), _ratio(va, vb)))
    if "ramp" in (a.get("scenario"), b.get("scenario")):
        va, vb = _number(a.get("largest_good_tables")), _number(b.get("largest_good_tables"))
        out.append(("largest good N (ramp)", _format(va), _format(vb), _ratio(va, vb)))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", type=Path, help="the reference result (A)")
    parser.add_argument("b", type=Path, help="the result compared with it (B)")
    parser.add_argument("--all", action="store_true", help="also the bench's own processes")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)  # quietly stop when piped into `head`
    a, b = load(args.a), load(args.b)
    for name, path, data in (("A", args.a, a), ("B", args.b, b)):
        cfg = data["config"]
        print(
            f"{name}: {path} ({data['scenario']}, {cfg['seconds']:g} s, pace {cfg['pace_s']:g} s)"
        )
    head = ("figure", "A", "B", "B/A")
    table = [head, *rows(a, b, args.all)]
    widths = [max(len(r[i]) for r in table) for i in range(len(head))]
    for r in table:
        print(
            r[0].ljust(widths[0])
            + "".join("  " + cell.rjust(widths[i + 1]) for i, cell in enumerate(r[1:]))
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

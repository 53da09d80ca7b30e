"""Where a process spends its samples, in text: ``python -m bench.load.hotspots FILE [--top N]``
reads py-spy's raw collapsed stacks (``python -m bench.load ... --profile DIR
--profile-format raw``) and prints the functions with the most samples of their own and in
all, each as a share of all samples (``testing.hotspots``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from testing.hotspots import parse, render

__all__ = ["main"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.load.hotspots", description=__doc__)
    parser.add_argument("file", type=Path, help="py-spy raw output (--profile-format raw)")
    parser.add_argument("--top", type=int, default=40, help="functions per list (default 40)")
    args = parser.parse_args(argv)
    with args.file.open(encoding="utf-8") as lines:
        print(render(parse(lines), args.top))
    return 0


if __name__ == "__main__":
    sys.exit(main())

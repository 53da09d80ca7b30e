"""``python -m bench.load``: see ``bench.load`` and ``bench.load.main``."""

from __future__ import annotations

import sys

from bench.load.main import main

sys.exit(main())

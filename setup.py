"""Build hook: the gRPC stubs are generated from ``protos/`` before packages are collected.

Everything else about the project lives in ``pyproject.toml``.
"""

from __future__ import annotations

import sys
from pathlib import Path

from setuptools import setup

sys.path.insert(0, str(Path(__file__).resolve().parent / "tools"))
import gen_protos  # noqa: E402

gen_protos.generate()
setup()

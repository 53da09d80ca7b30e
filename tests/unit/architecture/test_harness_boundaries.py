"""The harness boundaries hold: ``tests`` and ``bench`` share their harness through
``testing`` and never import each other, ``testing`` imports neither of them (it sits below
both), and the services import none of the three.

``testing`` is the one home of what both need (real servers and service processes, the
cluster, scripted players, percentiles, ...); a helper one of them wants from the other
belongs there. Like ``test_boundaries``, the test reads every module's imports (top level and
function level, conftest files included) with ``ast``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .imports import ROOT, imports_of

#: What each top-level package must never import (top-level names).
FORBIDDEN = {
    "tests": {"bench"},
    "bench": {"tests"},
    "testing": {"tests", "bench"},
    "services": {"tests", "bench", "testing"},
}


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def _crossings(package: str, paths: list[Path]) -> set[str]:
    return {
        f"{path.relative_to(ROOT) if path.is_relative_to(ROOT) else path} imports {name}"
        for path in paths
        for name in imports_of(path)
        if name.split(".")[0] in FORBIDDEN[package]
    }


def test_every_package_of_the_table_exists_and_testing_is_a_package() -> None:
    assert all((ROOT / package / "__init__.py").is_file() for package in FORBIDDEN)
    assert not (ROOT / "tests" / "support").exists(), "the harness lives in testing/"


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_a_package_imports_nothing_its_boundary_forbids(package: str) -> None:
    crossings = _crossings(package, _modules(package))
    assert not crossings, sorted(crossings)


@pytest.mark.parametrize(
    ("package", "source"),
    [
        ("tests", "def f():\n    from bench.load.config import Config\n"),
        ("bench", "import tests.support.servers\n"),
        ("testing", "from tests.conftest import redis_server\n"),
        ("testing", "from bench import histogram\n"),
    ],
)
def test_the_boundary_check_sees_a_crossing(tmp_path: Path, package: str, source: str) -> None:
    """The checker itself: a forbidden import, even inside a function, is seen."""
    module = tmp_path / "probe.py"
    module.write_text(source)
    assert _crossings(package, [module])

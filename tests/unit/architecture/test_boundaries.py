"""The package boundaries hold: no service imports another service's package.

``services`` holds the services (``table``, ``timer``, ``gateway``, ``client``: each owns its
module tree), the pure rules engine (``rules``) and the shared runtime every service uses and
none owns (``common``: keys and records, the bus, presence, errors, settings, bootstrap).
Each package may import only what this table allows; the test reads every module's imports
(top level and function level) with ``ast``, so a new import across a boundary fails here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from .imports import ROOT
from .imports import imports_of as _imports

SERVICES = ROOT / "services"

#: What each top-level package of ``services`` may import of ``services``.
ALLOWED = {
    "rules": {"rules"},
    "common": {"common", "rules"},
    "table": {"table", "common", "rules"},
    "timer": {"timer", "common", "rules"},
    "gateway": {"gateway", "common", "rules"},
    "client": {"client", "common", "rules"},
    "robots": {"robots", "rules"},
    "bots": {"bots", "common", "robots", "rules"},
}
#: Third-party packages the rules engine must never import (it is pure: state in, state out).
IMPURE = {"grpc", "redis", "nats", "dominos", "time", "random", "secrets", "asyncio"}


def _modules(package: str) -> list[Path]:
    return sorted((SERVICES / package).rglob("*.py"))


def test_every_package_of_services_is_in_the_table() -> None:
    packages = {p.name for p in SERVICES.iterdir() if p.is_dir() and p.name != "__pycache__"}
    assert packages == set(ALLOWED)


@pytest.mark.parametrize("package", sorted(ALLOWED))
def test_a_package_imports_only_what_its_boundary_allows(package: str) -> None:
    crossings = {
        f"{path.relative_to(ROOT)} imports {name}"
        for path in _modules(package)
        for name in _imports(path)
        if name.startswith("services.") and name.split(".")[1] not in ALLOWED[package]
    }
    assert not crossings, sorted(crossings)


@pytest.mark.parametrize("package", ["rules", "robots"])
def test_the_pure_packages_import_no_io_clock_or_randomness(package: str) -> None:
    """The engine and the computer players are pure (a random source is passed in)."""
    impure = {
        f"{path.relative_to(ROOT)} imports {name}"
        for path in _modules(package)
        for name in _imports(path)
        if name.split(".")[0] in IMPURE
    }
    assert not impure, sorted(impure)


def test_the_boundary_check_sees_a_crossing(tmp_path: Path) -> None:
    """The checker itself: an import of another service, even inside a function, is seen."""
    module = tmp_path / "probe.py"
    module.write_text("def f():\n    from services.table.store import TableStore\n")
    assert "services.table.store" in _imports(module)

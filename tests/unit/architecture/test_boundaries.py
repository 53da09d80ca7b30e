"""The package boundaries hold: no service imports another service's package.

``services`` holds the services (``table``, ``timer``, ``gateway``, ``client``: each owns its
module tree), the pure rules engine (``rules``) and the shared runtime every service uses and
none owns (``common``: keys and records, the bus, presence, errors, settings, bootstrap).
Each package may import only what this table allows; the test reads every module's imports
(top level and function level) with ``ast``, so a new import across a boundary fails here.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SERVICES = ROOT / "services"

#: What each top-level package of ``services`` may import of ``services``.
ALLOWED = {
    "rules": {"rules"},
    "common": {"common", "rules"},
    "table": {"table", "common", "rules"},
    "timer": {"timer", "common", "rules"},
    "gateway": {"gateway", "common", "rules"},
    "client": {"client", "common", "rules"},
}
#: Third-party packages the rules engine must never import (it is pure: state in, state out).
IMPURE = {"grpc", "redis", "nats", "dominos", "time", "random", "secrets", "asyncio"}


def _imports(path: Path) -> set[str]:
    """Every module ``path`` imports (absolute names; relative ones resolved)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    inside = path.is_relative_to(ROOT)
    package = ".".join(path.relative_to(ROOT).with_suffix("").parts[:-1]) if inside else ""
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                names.add(f"{base}.{node.module}" if node.module else base)
            elif node.module:
                names.add(node.module)
    return names


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


def test_the_rules_engine_imports_no_io_clock_or_randomness() -> None:
    impure = {
        f"{path.relative_to(ROOT)} imports {name}"
        for path in _modules("rules")
        for name in _imports(path)
        if name.split(".")[0] in IMPURE
    }
    assert not impure, sorted(impure)


def test_the_boundary_check_sees_a_crossing(tmp_path: Path) -> None:
    """The checker itself: an import of another service, even inside a function, is seen."""
    module = tmp_path / "probe.py"
    module.write_text("def f():\n    from services.table.store import TableStore\n")
    assert "services.table.store" in _imports(module)

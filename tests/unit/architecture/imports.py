"""What a module imports, read with ``ast`` (top level and function level alike): the helper
of the boundary tests of this package."""

from __future__ import annotations

import ast
from pathlib import Path

#: The repository (``tests/unit/architecture/imports.py`` is three levels down).
ROOT = Path(__file__).resolve().parents[3]


def imports_of(path: Path) -> set[str]:
    """Every module ``path`` imports (absolute names; relative ones resolved against the
    module's package under :data:`ROOT`)."""
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

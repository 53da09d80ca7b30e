"""Generate the Python stubs of the contract (``protos/``) into ``gen/``.

The stubs are a build product: never committed, never hand-edited. ``setup.py`` runs this
module at every build or (editable) install, ``make proto`` runs it after a ``.proto``
changes, and ``tests/unit/contract/test_stubs_match_protos.py`` recompiles the protos and
compares the result with what ``import dominos.v1`` loads, so the two cannot drift.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import grpc_tools
from grpc_tools import protoc

ROOT = Path(__file__).resolve().parent.parent
PROTO_ROOT = ROOT / "protos"
GEN_ROOT = ROOT / "gen"


#: The contract's own files; ``protos/google/`` holds googleapis' error model, which Python
#: takes from the ``googleapis-common-protos`` package (``google.rpc.status_pb2``).
OWN_PACKAGE = "dominos"

#: The Connect code generator (the ``protoc-gen-connect-python`` wheel, a build requirement):
#: ``*_connect.py`` modules with the ASGI application the gateway's web edge serves.
CONNECT_PLUGIN = "protoc-gen-connect-python"


def connect_plugin() -> str:
    """The path of the Connect plugin: on ``PATH`` (a build environment puts its scripts
    there), else beside the running interpreter (a virtualenv not activated). Raises
    ``RuntimeError`` when it is not installed."""
    found = shutil.which(CONNECT_PLUGIN) or shutil.which(
        CONNECT_PLUGIN, path=os.path.dirname(sys.executable)
    )
    if not found:
        raise RuntimeError(f"{CONNECT_PLUGIN} is not installed (pip install {CONNECT_PLUGIN})")
    return found


def proto_files(proto_root: Path = PROTO_ROOT) -> list[Path]:
    """Every ``.proto`` file of the contract, sorted, relative to ``proto_root``."""
    return sorted(p.relative_to(proto_root) for p in (proto_root / OWN_PACKAGE).rglob("*.proto"))


def compile_into(out_dir: Path, proto_root: Path = PROTO_ROOT) -> None:
    """Compile every proto below ``proto_root`` into ``out_dir`` (messages, .pyi, gRPC stubs,
    Connect stubs).

    Package folders get an ``__init__.py`` and a ``py.typed`` marker so the stubs import as
    ``dominos.v1`` and type-check. Raises ``RuntimeError`` when protoc reports an error.
    """
    include = Path(grpc_tools.__file__).parent / "_proto"
    out_dir.mkdir(parents=True, exist_ok=True)
    files = [str(p) for p in proto_files(proto_root)]
    args = [
        "grpc_tools.protoc",
        f"-I{proto_root}",
        f"-I{include}",
        f"--python_out={out_dir}",
        f"--pyi_out={out_dir}",
        f"--grpc_python_out={out_dir}",
        f"--plugin={CONNECT_PLUGIN}={connect_plugin()}",
        f"--connect-python_out={out_dir}",
        *files,
    ]
    if protoc.main(args) != 0:
        raise RuntimeError(f"protoc failed on {files}")
    for rel in proto_files(proto_root):
        pkg = out_dir / rel.parent
        while pkg != out_dir:
            (pkg / "__init__.py").touch()
            (pkg / "py.typed").touch()
            pkg = pkg.parent


def generate(gen_root: Path = GEN_ROOT) -> None:
    """Replace ``gen_root`` atomically enough with freshly generated stubs."""
    with tempfile.TemporaryDirectory() as tmp:
        compile_into(Path(tmp))
        if gen_root.exists():
            shutil.rmtree(gen_root)
        shutil.copytree(tmp, gen_root)


if __name__ == "__main__":
    generate()
    print(f"generated stubs for {len(proto_files())} proto files into {GEN_ROOT}", file=sys.stderr)

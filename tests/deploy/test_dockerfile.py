"""The Dockerfile (parsed: no Docker engine here) and its build context.

Docker cannot build on this machine, so the build is checked in parts: the Dockerfile's
structure (stages, pinned base image, non-root user, entry point, ports), the
``.dockerignore`` allow-list, and a wheel built from exactly the files the builder stage
copies, which runs the same ``setup.py`` stub generation as ``pip install .`` in the image.
"""

from __future__ import annotations

import fnmatch
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path
from typing import Any

import pytest
from dockerfile_parse import DockerfileParser

from services.common.settings import Settings

from .conftest import ROOT

DOCKERFILE = ROOT / "Dockerfile"
DOCKERIGNORE = ROOT / ".dockerignore"
BASE_IMAGE = re.compile(r"^python:(3\.\d+\.\d+)-slim-bookworm(@sha256:[0-9a-f]{64})?$")
NODE_IMAGE = re.compile(r"^node:(\d+\.\d+\.\d+)-bookworm-slim(@sha256:[0-9a-f]{64})?$")
#: The web edge's port in the manifests (DOMINOS_WEB_PORT; off by default).
WEB_PORT = 8080


@pytest.fixture(scope="module")
def instructions() -> list[dict[str, Any]]:
    parser = DockerfileParser(path=str(DOCKERFILE))
    return [dict(instruction) for instruction in parser.structure]


def stages(instructions: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    out: list[list[dict[str, Any]]] = []
    for instruction in instructions:
        if instruction["instruction"] == "FROM":
            out.append([])
        if out:
            out[-1].append(instruction)
    return out


def values(stage: list[dict[str, Any]], name: str) -> list[str]:
    return [str(i["value"]) for i in stage if i["instruction"] == name]


def test_multi_stage_build_on_a_pinned_base_image(instructions: list[dict[str, Any]]) -> None:
    froms = [i["value"].split() for i in instructions if i["instruction"] == "FROM"]
    assert [f[-1] for f in froms] == ["web", "builder", "runtime"]
    assert NODE_IMAGE.match(froms[0][0]), f"web stage not pinned to a patch release: {froms[0]}"
    froms = froms[1:]  # the Python stages
    for words in froms:
        assert BASE_IMAGE.match(words[0]), f"base image not pinned to a patch release: {words[0]}"
    assert len({words[0] for words in froms}) == 1, "both stages share the base (venv symlinks)"
    python = BASE_IMAGE.match(froms[0][0])
    assert python is not None
    requires = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    minimum = tuple(int(p) for p in requires.removeprefix(">=").split("."))
    assert tuple(int(p) for p in python.group(1).split("."))[:2] >= minimum


def test_builder_installs_the_project_with_its_proto_sources(
    instructions: list[dict[str, Any]],
) -> None:
    builder = stages(instructions)[1]
    copied = " ".join(values(builder, "COPY"))
    for needed in ("pyproject.toml", "setup.py", "README.md", "tools/", "protos/", "services/"):
        assert needed in copied, f"the builder stage does not copy {needed}"
    assert any("pip install ." in run for run in values(builder, "RUN"))


def test_runtime_stage_copies_the_venv_and_runs_unprivileged(
    instructions: list[dict[str, Any]],
) -> None:
    runtime = stages(instructions)[-1]
    assert "--from=builder /opt/venv /opt/venv" in values(runtime, "COPY")
    # The web client's files, where the manifests' DOMINOS_WEB_ROOT points.
    assert "--from=web /src/clients/web/dist /app/clients/web/dist" in values(runtime, "COPY")
    users = values(runtime, "USER")
    assert users and users[-1].split(":")[0] == "10001"
    user_at = max(i for i, ins in enumerate(runtime) if ins["instruction"] == "USER")
    assert all(ins["instruction"] not in ("RUN", "COPY") for ins in runtime[user_at:])
    assert json.loads(values(runtime, "ENTRYPOINT")[-1]) == ["python", "-m"]
    assert json.loads(values(runtime, "CMD")[-1]) == ["services.gateway"]
    exposed = {int(p) for v in values(runtime, "EXPOSE") for p in v.split()}
    defaults = Settings()
    assert exposed == {defaults.grpc_port, defaults.metrics_port, WEB_PORT}


def test_the_web_stage_builds_the_client_from_its_lock_file(
    instructions: list[dict[str, Any]],
) -> None:
    web = stages(instructions)[0]
    runs = values(web, "RUN")
    assert any("npm ci" in run for run in runs) and any("npm run build" in run for run in runs)
    copied = " ".join(values(web, "COPY"))
    assert "protos/" in copied and "clients/web/package-lock.json" in copied


def test_no_remote_add_no_latest_no_secrets(instructions: list[dict[str, Any]]) -> None:
    assert not [i for i in instructions if i["instruction"] == "ADD"], "use COPY, never ADD"
    text = DOCKERFILE.read_text()
    assert ":latest" not in text
    for ins in instructions:
        if ins["instruction"] in ("ENV", "ARG", "LABEL"):
            assert "SECRET" not in ins["value"].upper() and "PASSWORD" not in ins["value"].upper()


# -- build context --------------------------------------------------------------------------


def _dockerignore_patterns() -> list[tuple[bool, str]]:
    patterns = []
    for raw in DOCKERIGNORE.read_text().splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        negated = line.startswith("!")
        pattern = line.removeprefix("!").strip().strip("/")
        patterns.append((negated, pattern))
    return patterns


def _pattern_regex(pattern: str) -> re.Pattern[str]:
    parts = []
    for token in re.split(r"(\*\*/|\*\*|\*|\?)", pattern):
        parts.append(
            {"**/": "(?:.*/)?", "**": ".*", "*": "[^/]*", "?": "[^/]"}.get(token)
            or re.escape(token)
        )
    return re.compile("".join(parts) + r"\Z")


def ignored(relative: str) -> bool:
    """Whether Docker leaves ``relative`` (posix path) out of the build context: the last
    pattern matching the path or one of its parent folders decides."""
    parts = relative.split("/")
    candidates = ["/".join(parts[: i + 1]) for i in range(len(parts))]
    result = False
    for negated, pattern in _dockerignore_patterns():
        regex = _pattern_regex(pattern)
        if any(regex.match(c) for c in candidates):
            result = not negated
    return result


def build_context() -> list[Path]:
    """The files Docker sends as build context (top-level folders pruned when ignored and no
    exception reopens a path inside them)."""
    files = []
    reopened = {p.split("/")[0] for negated, p in _dockerignore_patterns() if negated}
    for top in sorted(ROOT.iterdir()):
        if ignored(top.name) and top.name not in reopened:
            continue
        if top.is_file():
            files.append(top)
            continue
        for path in sorted(top.rglob("*")):
            if path.is_file() and not ignored(path.relative_to(ROOT).as_posix()):
                files.append(path)
    return files


def test_dockerignore_matcher() -> None:
    assert not ignored("services/table/server.py")
    assert ignored("services/table/__pycache__/server.cpython-311.pyc")
    assert ignored(".venv/bin/python")
    assert ignored("tests/conftest.py")
    assert ignored("gen/dominos/v1/game_pb2.py")
    assert fnmatch.fnmatch("x", "*")  # sanity of the standard library


def test_build_context_is_what_the_image_needs() -> None:
    context = {p.relative_to(ROOT).as_posix() for p in build_context()}
    for needed in ("pyproject.toml", "setup.py", "README.md", "tools/gen_protos.py"):
        assert needed in context
    assert any(p.startswith("protos/dominos/v1/") and p.endswith(".proto") for p in context)
    assert "services/table/__main__.py" in context
    assert "clients/web/package-lock.json" in context and "clients/web/src/app.ts" in context
    for left_out in (
        "tests/",
        ".venv/",
        "gen/",
        "deploy/",
        "bench/",
        ".git/",
        "clients/node/",
        "clients/web/node_modules/",
        "clients/web/dist/",
        "clients/web/src/gen/",
    ):
        assert not any(p.startswith(left_out) for p in context), left_out
    assert not any("__pycache__" in p for p in context)


def test_wheel_builds_from_the_build_context(tmp_path: Path) -> None:
    """What `pip install .` does in the builder, offline: build the wheel from a copy of the
    context (generating the stubs from protos/) and look for every entry point's module."""
    for build_requirement in ("setuptools", "grpc_tools"):
        if importlib.util.find_spec(build_requirement) is None:
            pytest.fail(f"{build_requirement} (a build requirement) is missing: `make install`")
    source = tmp_path / "context"
    for path in build_context():
        target = source / path.relative_to(ROOT)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, target)
    out = tmp_path / "wheel"
    proc = subprocess.run(
        [
            sys.executable,
            *("-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--quiet"),
            *("--wheel-dir", str(out), str(source)),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    (wheel,) = out.glob("dominos_cluster-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    for module in (
        "services/table/__main__.py",
        "services/timer/__main__.py",
        "services/gateway/__main__.py",
        "services/bots/__main__.py",
        "services/robots/levels.py",
        "dominos/v1/gateway_pb2_grpc.py",
        "dominos/v1/table_pb2.py",
        "dominos/v1/events_pb2.py",
    ):
        assert module in names, f"{module} missing from the wheel"

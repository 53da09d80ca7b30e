"""``buf breaking`` against the last release (protos/releases/): the contract of today breaks
no client of 0.1.0, and the check does fail on a change that would."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import yaml

from testing.servers import find_binary

ROOT = Path(__file__).resolve().parents[3]
RELEASE = ROOT / "protos" / "releases" / "v0.1.0.binpb"


def _breaking(protos: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [find_binary("buf"), "breaking", "--against", str(RELEASE)],
        cwd=protos,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )


def test_the_contract_breaks_no_client_of_the_last_release() -> None:
    done = _breaking(ROOT / "protos")
    assert done.returncode == 0, done.stdout + done.stderr


def test_removing_a_field_of_the_last_release_is_caught(tmp_path: Path) -> None:
    protos = tmp_path / "protos"
    shutil.copytree(ROOT / "protos", protos)
    gateway = protos / "dominos" / "v1" / "gateway.proto"
    text = gateway.read_text()
    assert "  uint64 expected_version = 3;\n" in text
    gateway.write_text(text.replace("  uint64 expected_version = 3;\n", "", 1))
    done = _breaking(protos)
    assert done.returncode != 0
    assert "expected_version" in done.stdout + done.stderr


def test_the_buf_gen_examples_are_buf_v2_with_an_output_per_plugin() -> None:
    config = yaml.safe_load((ROOT / "protos" / "buf.gen.yaml").read_text())
    assert config["version"] == "v2"
    plugins = config["plugins"]
    assert {"remote"} <= set().union(*(p.keys() for p in plugins))
    assert all(p["out"].startswith("gen/") for p in plugins)
    assert any("bufbuild/es" in p.get("remote", "") for p in plugins)  # TypeScript

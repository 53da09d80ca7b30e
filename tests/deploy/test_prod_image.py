"""The prod overlay runs exactly the image it is given, by digest (issue 21): ``make
deploy-render OVERLAY=prod IMAGE=<registry>/<name>@sha256:<digest>`` (deploy/k8s/render.sh)
refuses anything else with one line, and the committed overlay holds no image at all, so it
cannot be applied from a placeholder registry or by a mutable tag."""

from __future__ import annotations

import re
import shutil
import subprocess
from typing import Any

import pytest
import yaml

from .conftest import K8S, make_deploy_render, render_overlay

DIGEST = "sha256:" + "89abcdef01234567" * 4
#: Refused values of IMAGE, and what the one-line message must say about each.
REFUSED = {
    "missing": (None, "needs IMAGE="),
    "empty": ("", "needs IMAGE="),
    "a tag": ("registry.acme.io/dominos/dominos-cluster:0.2.0", "is not <registry>/<name>@sha256"),
    "a tag and a digest": (
        f"registry.acme.io/dominos/dominos-cluster:0.2.0@{DIGEST}",
        "is not <registry>/<name>@sha256",
    ),
    "a short digest": ("registry.acme.io/dominos/dominos-cluster@sha256:0123abcd", "is not"),
    "an upper-case digest": (
        f"registry.acme.io/dominos/dominos-cluster@{DIGEST.upper()}",
        "is not",
    ),
    "no registry host": (f"dominos/dominos-cluster@{DIGEST}", "names no registry host"),
    "no path": (f"registry.acme.io@{DIGEST}", "is not"),
    "the old placeholder": (
        f"registry.example.com/dominos/dominos-cluster@{DIGEST}",
        "placeholder registry 'registry.example.com'",
    ),
    "example.org": (f"example.org:5000/dominos-cluster@{DIGEST}", "placeholder registry"),
    "a .test host": (f"registry.acme.test/dominos-cluster@{DIGEST}", "placeholder registry"),
    "an .invalid host": (f"registry.invalid/dominos-cluster@{DIGEST}", "placeholder registry"),
    "a space": (f"registry.acme.io/dominos/dominos-cluster@{DIGEST} x", "is not"),
}
#: Accepted: a registry host (a dot, a port or localhost), a path, a digest.
ACCEPTED = (
    f"registry.acme.io/dominos/dominos-cluster@{DIGEST}",
    f"localhost:5000/dominos-cluster@{DIGEST}",
    f"123456789012.dkr.ecr.eu-west-1.amazonaws.com/dominos/dominos-cluster@{DIGEST}",
    f"ghcr.io/some-org/dominos_cluster@{DIGEST}",
)


def deployment_images(manifests: list[dict[str, Any]]) -> dict[str, list[str]]:
    return {
        m["metadata"]["name"]: [c["image"] for c in m["spec"]["template"]["spec"]["containers"]]
        for m in manifests
        if m["kind"] == "Deployment"
    }


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_prod_render_refuses_anything_but_a_registry_digest(case: str) -> None:
    image, says = REFUSED[case]
    proc = make_deploy_render("prod", image)
    assert proc.returncode != 0, f"{case}: rendered\n{proc.stdout[:500]}"
    assert proc.stdout == "", "no manifest at all is printed"
    ours = [line for line in proc.stderr.splitlines() if line.startswith("deploy-render:")]
    assert len(ours) == 1, f"one line of explanation, got {proc.stderr!r}"
    (line,) = ours
    assert says in line, line
    assert "IMAGE" in line, line


@pytest.mark.parametrize("image", ACCEPTED)
def test_every_deployment_runs_the_given_digest(image: str) -> None:
    manifests = render_overlay("prod", image)
    images = deployment_images(manifests)
    assert set(images) == {f"dominos-{s}" for s in ("table", "timer", "gateway", "bots")}
    for name, containers in images.items():
        assert containers == [image], name
    # The image's carrier is kustomize-local: read for the replacement, never applied.
    assert not [m for m in manifests if m["metadata"]["name"] == "dominos-image"]
    assert "@sha256:" in yaml.safe_dump_all(manifests)


def test_the_committed_prod_overlay_holds_no_image_and_does_not_build_alone() -> None:
    """No registry in git (the old `registry.example.com` placeholder, or any other), no
    image.env next to the overlay, and `kubectl kustomize` on it (as `kubectl apply -k` would)
    fails for want of image.env instead of rendering a pod that pulls a placeholder."""
    overlay = K8S / "overlays" / "prod"
    kustomization = yaml.safe_load((overlay / "kustomization.yaml").read_text())
    assert "images" not in kustomization, "prod takes its image from IMAGE only"
    (generator,) = [g for g in kustomization["configMapGenerator"] if g["name"] == "dominos-image"]
    assert generator["envs"] == ["image.env"]
    assert generator["options"]["annotations"] == {"config.kubernetes.io/local-config": "true"}
    assert not (overlay / "image.env").exists(), "image.env is written by make deploy-render"
    for path in K8S.rglob("*.yaml"):
        text = "\n".join(
            line for line in path.read_text().splitlines() if not line.lstrip().startswith("#")
        )
        assert not re.search(r"example\.(com|net|org)/", text), f"{path}: a placeholder registry"
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl renders the overlays"
    proc = subprocess.run(
        [kubectl, "kustomize", str(overlay)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode != 0 and proc.stdout == ""
    assert "image.env" in proc.stderr


def test_the_dev_overlay_needs_no_image(rendered_overlays: dict[str, list[dict[str, Any]]]) -> None:
    """dev runs the locally built image (kind load), as before."""
    for name, containers in deployment_images(rendered_overlays["dev"]).items():
        assert containers == ["dominos-cluster:dev"], name

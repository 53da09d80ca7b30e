#!/usr/bin/env bash
# Print the manifests of an overlay of deploy/k8s (what `make deploy-render` runs):
#
#   deploy/k8s/render.sh dev
#   deploy/k8s/render.sh prod <registry>/<name>@sha256:<digest>
#
# prod runs exactly the image it is given, pinned by digest: the overlay keeps no image of its
# own (overlays/prod/kustomization.yaml reads it from image.env, which is not in git), so this
# script checks the reference and renders a temporary copy of deploy/k8s with that file
# written. Refused, with one line on stderr and exit status 2: no image, a tag instead of a
# digest, no registry host, or a placeholder domain (example.com/.net/.org and the reserved
# .example, .invalid, .test: RFC 2606).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
overlay="${1:-}"
image="${2:-}"

refuse() {
    echo "deploy-render: $*" >&2
    exit 2
}

[[ -n "$overlay" && -d "$here/overlays/$overlay" ]] ||
    refuse "unknown OVERLAY '$overlay' (one of: $(cd "$here/overlays" && echo *))"

if [[ "$overlay" != prod ]]; then
    [[ -z "$image" ]] || echo "deploy-render: IMAGE is ignored for OVERLAY=$overlay" >&2
    exec kubectl kustomize "$here/overlays/$overlay"
fi

usage="OVERLAY=prod needs IMAGE=<registry>/<name>@sha256:<64 hex digits> (pushed image, by digest)"
[[ -n "$image" ]] || refuse "$usage"
component='[a-z0-9]+([._-][a-z0-9]+)*'
host_label='[a-zA-Z0-9]([a-zA-Z0-9-]*[a-zA-Z0-9])?'
reference="^(${host_label}(\.${host_label})*(:[0-9]+)?)/${component}(/${component})*@sha256:[0-9a-f]{64}$"
[[ "$image" =~ $reference ]] || refuse "IMAGE='$image' is not <registry>/<name>@sha256:<digest>: $usage"
registry="${BASH_REMATCH[1],,}"
host="${registry%%:*}"
[[ "$registry" == *.* || "$registry" == *:* || "$host" == localhost ]] ||
    refuse "IMAGE='$image' names no registry host (first part '$registry'): $usage"
if [[ "$host" =~ (^|\.)example\.(com|net|org)$ || "$host" =~ \.(example|invalid|test)$ ]]; then
    refuse "IMAGE='$image' is on the placeholder registry '$host': push the image to yours"
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
cp -R "$here/." "$tmp/"
printf 'IMAGE=%s\n' "$image" >"$tmp/overlays/prod/image.env"
kubectl kustomize "$tmp/overlays/prod"

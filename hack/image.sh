#!/usr/bin/env bash
# Builds the container image from the Dockerfile with buildah, on this machine, from the release
# binary built here (target/release, `make build`): the binary is fed in place of the Dockerfile's
# builder stage, and the public runtime base is used when it can be pulled; otherwise a local
# equivalent is built from Debian packages first (hack/image-base.sh), and this says so. Prints the
# image's size and layers.
#
#   hack/image.sh IMAGE:TAG
# RUNTIME_IMAGE=... picks the runtime base instead (no pull is tried).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
if (($# != 1)); then
  echo "usage: hack/image.sh IMAGE:TAG" >&2
  exit 2
fi
image=$1
public=gcr.io/distroless/cc-debian12:nonroot
local_base=localhost/gardener-scheduler-base:cc-debian12-nonroot

# What the builder stage would leave: OUT/gardener-scheduler without line tables.
context=target/image/builder
hack/image-binary.sh target/release/gardener-scheduler "$context/out"

runtime=${RUNTIME_IMAGE:-}
if [[ -z "$runtime" ]]; then
  if buildah inspect --type image "$public" >/dev/null 2>&1; then
    runtime=$public
  elif error=$(timeout 60 buildah pull --quiet "$public" 2>&1 >/dev/null); then
    runtime=$public
  else
    echo "image: the public runtime base $public cannot be pulled here ($(tail -n1 <<<"$error"));" \
      "building a local equivalent from Debian packages: $local_base" >&2
    hack/image-base.sh "$local_base"
    runtime=$local_base
  fi
fi
echo "image: runtime base $runtime" >&2

buildah bud --quiet --layers=false \
  --build-context builder="$context" \
  --build-arg RUNTIME_IMAGE="$runtime" \
  --tag "$image" . >/dev/null

size=$(podman image inspect --format '{{.Size}}' "$image")
echo "image: built $image, $((size / 1024 / 1024)) MiB ($size bytes) uncompressed; layers, newest first:" >&2
podman history --format '  {{.Size}}\t{{.CreatedBy}}' "$image" >&2

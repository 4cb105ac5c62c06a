#!/usr/bin/env bash
# Prints the bin dir of the cached test API server (crd-apiserver + etcd), building it with
# build.sh first when it is missing. The cache lives outside the clone so that fresh clones on the
# same machine (CI) reuse it:
#   ${GARDENER_SCHEDULER_CACHE:-~/.cache/gardener-scheduler}/test-apiserver-<hash>/bin
# where <hash> is the first 12 hex chars of sha256(build.sh main.go corev1.go).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
HASH=$(cat "$HERE"/build.sh "$HERE"/main.go "$HERE"/corev1.go | sha256sum | cut -c1-12)
ROOT=${GARDENER_SCHEDULER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gardener-scheduler}
CACHE=$ROOT/test-apiserver-$HASH
mkdir -p "$ROOT"
ready() { [ -x "$CACHE/bin/crd-apiserver" ] && [ -x "$CACHE/bin/etcd" ]; }
if ! ready; then
  # one build at a time, even when several test binaries ask at once
  exec 9>"$CACHE.lock"
  flock 9
  if ! ready; then
    echo "ensure.sh: building the test API server into $CACHE (about 5 minutes, once)" >&2
    "$HERE"/build.sh "$CACHE" >&2
  fi
fi
ready || { echo "ensure.sh: $CACHE/bin lacks crd-apiserver or etcd after the build" >&2; exit 1; }
echo "$CACHE/bin"

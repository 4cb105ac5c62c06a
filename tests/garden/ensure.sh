#!/usr/bin/env bash
# Prints the bin dir of the cached garden cluster servers (etcd, kube-apiserver, gardener-apiserver)
# and render-scheduler, building them with build.sh first when they are missing. The cache lives
# outside the clone so that fresh clones on the same machine (CI) reuse it:
#   ${GARDENER_SCHEDULER_CACHE:-~/.cache/gardener-scheduler}/garden-<hash>/bin
# where <hash> is the first 12 hex chars of sha256 of build.sh and the wrapper modules.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
HASH=$(cat "$HERE"/build.sh "$HERE"/kubernetes/go.mod "$HERE"/kubernetes/go.sum "$HERE"/kubernetes/etcd/main.go \
  "$HERE"/gardener/go.mod "$HERE"/gardener/go.sum "$HERE"/gardener/render-scheduler/main.go | sha256sum | cut -c1-12)
ROOT=${GARDENER_SCHEDULER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gardener-scheduler}
CACHE=$ROOT/garden-$HASH
mkdir -p "$ROOT"
ready() {
  for b in etcd kube-apiserver gardener-apiserver render-scheduler; do [ -x "$CACHE/bin/$b" ] || return 1; done
}
if ! ready; then
  # one build at a time, even when several test binaries ask at once
  exec 9>"$CACHE.lock"
  flock 9
  if ! ready; then
    echo "ensure.sh: building etcd, kube-apiserver and gardener-apiserver into $CACHE (about 15 minutes on 2 cores, once)" >&2
    "$HERE"/build.sh "$CACHE.tmp" >&2
    rm -rf "$CACHE" && mv "$CACHE.tmp" "$CACHE"
  fi
fi
ready || { echo "ensure.sh: $CACHE/bin lacks etcd, kube-apiserver or gardener-apiserver after the build" >&2; exit 1; }
echo "$CACHE/bin"

#!/usr/bin/env bash
# Prints the path of the reference program (upstream's scheduler decision, main.go beside this
# script), building it first when it is missing. The build lives outside the clone so that fresh
# clones on the same machine (CI) reuse it:
#   ${GARDENER_SCHEDULER_CACHE:-~/.cache/gardener-scheduler}/reference-<hash>/reference
# where <hash> is the first 12 hex chars of sha256 of this script, go.mod, go.sum and the *.go files.
# Modules come from the Go module proxy at the versions go.mod and go.sum pin.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
HASH=$(cat "$HERE"/ensure.sh "$HERE"/go.mod "$HERE"/go.sum "$HERE"/*.go | sha256sum | cut -c1-12)
ROOT=${GARDENER_SCHEDULER_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gardener-scheduler}
CACHE=$ROOT/reference-$HASH
mkdir -p "$ROOT"
ready() { [ -x "$CACHE/reference" ]; }
if ! ready; then
  # one build at a time, even when several test binaries ask at once
  exec 9>"$CACHE.lock"
  flock 9
  if ! ready; then
    command -v go >/dev/null || { echo "ensure.sh: no go command on PATH (Go 1.26 is needed)" >&2; exit 1; }
    echo "ensure.sh: building the reference program into $CACHE (about 3 minutes on 2 cores, once)" >&2
    t=$SECONDS
    mkdir -p "$CACHE.tmp"
    (cd "$HERE" && GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0 \
      go build -trimpath -o "$CACHE.tmp/reference" .)
    echo "ensure.sh: built in $((SECONDS - t)) s" >&2
    rm -rf "$CACHE" && mv "$CACHE.tmp" "$CACHE"
  fi
fi
ready || { echo "ensure.sh: $CACHE lacks the reference program after the build" >&2; exit 1; }
echo "$CACHE/reference"

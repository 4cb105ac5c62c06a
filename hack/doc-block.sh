#!/usr/bin/env bash
# Replaces one generated block of a Markdown page with standard input, so that a benchmark
# rewrites its own figures and nothing else of the page. A block is the lines between
#
#   <!-- begin generated: KEY (by whom) -->
#   <!-- end generated: KEY -->
#
# and the marker lines stay. Fails, changing nothing, unless the page has the block exactly once.
#
#   hack/doc-block.sh docs/performance.md instructions < section.md
set -euo pipefail
if (($# != 2)); then
  echo "usage: hack/doc-block.sh PAGE KEY < BODY" >&2
  exit 2
fi
page="$1"
key="$2"
body="$(mktemp)"
out="$(mktemp)"
trap 'rm -f "$body" "$out"' EXIT
cat >"$body"
status=0
awk -v key="$key" -v body="$body" '
  BEGIN { begins = 0; ends = 0; inside = 0 }
  index($0, "<!-- begin generated: " key " ") == 1 || $0 == "<!-- begin generated: " key " -->" {
    print
    begins++
    inside = 1
    while ((getline line < body) > 0) print line
    next
  }
  $0 == "<!-- end generated: " key " -->" { ends++; inside = 0 }
  !inside { print }
  END { if (begins != 1 || ends != 1 || inside) exit 3 }
' "$page" >"$out" || status=$?
if ((status == 3)); then
  echo "doc-block: $page needs the block '$key' once: a line starting '<!-- begin generated: $key' and a line '<!-- end generated: $key -->'" >&2
  exit 1
elif ((status != 0)); then
  exit "$status"
fi
cat "$out" >"$page"

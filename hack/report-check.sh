#!/usr/bin/env bash
# Renders the example landscape's plan report (`plan drain … -o html`) in headless Chromium and
# fails unless the screenshot is a non-empty PNG, the DOM has the report's sections, and the
# browser logged no console errors. Chromium is required: a missing or failing browser fails.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

CARGO="${CARGO:-cargo}"
out="${REPORT_DIR:-target/report-check}"
mkdir -p "$out"

browser=""
for candidate in chromium chromium-browser google-chrome; do
  if command -v "$candidate" >/dev/null 2>&1; then
    browser="$candidate"
    break
  fi
done
if [[ -z "$browser" ]]; then
  echo "report-check: no chromium on PATH (apt-get install -y chromium)" >&2
  exit 1
fi

"$CARGO" run --quiet --locked -- plan drain aws-eu1 aws-jp1 az-weu1 \
  -f example/landscape/ --now 2026-12-01T12:00:00Z --max-concurrent 1 --horizon 24h \
  -o html >"$out/plan.html"

profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --user-data-dir="$profile" --enable-logging=stderr --v=0)
page="file://$(pwd)/$out/plan.html"

rm -f "$out/plan.png"
if ! timeout 120 "$browser" "${flags[@]}" --window-size=1440,900 \
  --screenshot="$out/plan.png" "$page" 2>"$out/screenshot.log" >/dev/null; then
  echo "report-check: $browser failed to take the screenshot; log:" >&2
  cat "$out/screenshot.log" >&2
  exit 1
fi
if ! timeout 120 "$browser" "${flags[@]}" --dump-dom "$page" \
  >"$out/dom.html" 2>"$out/dom.log"; then
  echo "report-check: $browser failed to load the page; log:" >&2
  cat "$out/dom.log" >&2
  exit 1
fi

size=$(stat -c %s "$out/plan.png" 2>/dev/null || echo 0)
if [[ "$size" -lt 10000 ]] || [[ "$(head -c 8 "$out/plan.png" | od -An -tx1 | tr -d ' \n')" != "89504e470d0a1a0a" ]]; then
  echo "report-check: $out/plan.png is missing, empty or not a PNG ($size bytes)" >&2
  exit 1
fi
if grep -E "Uncaught|ERROR:CONSOLE|CONSOLE\(.*\)\] \"(Uncaught|Error)" "$out/screenshot.log" "$out/dom.log"; then
  echo "report-check: the page logged console errors (above)" >&2
  exit 1
fi
for section in "<h1>Drain plan for" "<h2>Seeds</h2>" "<h2>Moves" "<h2>Cannot move" "<details>"; do
  if ! grep -qF "$section" "$out/dom.html"; then
    echo "report-check: the rendered page lacks $section" >&2
    exit 1
  fi
done
echo "report-check: $out/plan.png ($size bytes), no console errors, all sections rendered"

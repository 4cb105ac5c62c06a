#!/usr/bin/env bash
# Renders the example landscape's HTML reports (`plan drain … -o html`, `simulate -o html`, with
# `--compare` and with `--replay`, `explain -o html` of a pending and of a bound shoot) in
# headless Chromium and fails unless each screenshot is a non-empty PNG, the rendered DOM has the
# report's sections, and the browser logged no console errors. Chromium is required: a missing or
# failing browser fails the check, it never skips.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

CARGO="${CARGO:-cargo}"
out="${REPORT_DIR:-target/report-check}"
mkdir -p "$out"
out="$(cd "$out" && pwd)"

browser=""
for candidate in chromium chromium-browser google-chrome; do
  if command -v "$candidate" >/dev/null 2>&1; then
    browser="$candidate"
    break
  fi
done
if [[ -z "$browser" ]]; then
  echo "report-check: no chromium on PATH (hack/ensure-package.sh chromium chromium installs it)" >&2
  exit 1
fi

"$CARGO" build --quiet --locked
bin="$("$CARGO" metadata --format-version 1 --no-deps | sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')/debug/gardener-scheduler"
now=2026-12-01T12:00:00Z
"$bin" plan drain aws-eu1 aws-jp1 az-weu1 -f example/landscape/ --now "$now" \
  --max-concurrent 1 --horizon 24h -o html >"$out/plan.html"
"$bin" simulate -f example/landscape/ --now "$now" -o html >"$out/simulate.html"
"$bin" simulate -f example/landscape/ --now "$now" -o html \
  --config example/20-componentconfig-weighted.yaml \
  --compare example/20-componentconfig-gardener-scheduler.yaml >"$out/compare.html"
"$bin" simulate -f example/landscape/ --now "$now" -o html --replay >"$out/replay.html"
"$bin" explain garden-webshop/pos-jp -f example/landscape/ --now "$now" -o html >"$out/explain.html"
"$bin" explain garden-webshop/storefront -f example/landscape/ --now "$now" -o html >"$out/explain-bound.html"

profile="$(mktemp -d)"
trap 'rm -rf "$profile"' EXIT
flags=(--headless --no-sandbox --disable-gpu --disable-quic --no-first-run
  --disable-background-networking --disable-component-update --disable-sync
  --user-data-dir="$profile" --enable-logging=stderr --v=0)

# check NAME SECTION...: screenshot and DOM of $out/NAME.html.
check() {
  local name="$1"
  shift
  local page="file://$out/$name.html"
  rm -f "$out/$name.png"
  if ! timeout 120 "$browser" "${flags[@]}" --window-size=1440,900 \
    --screenshot="$out/$name.png" "$page" 2>"$out/$name-screenshot.log" >/dev/null; then
    echo "report-check: $browser failed to take the screenshot of $name.html; log:" >&2
    cat "$out/$name-screenshot.log" >&2
    exit 1
  fi
  if ! timeout 120 "$browser" "${flags[@]}" --dump-dom "$page" \
    >"$out/$name-dom.html" 2>"$out/$name-dom.log"; then
    echo "report-check: $browser failed to load $name.html; log:" >&2
    cat "$out/$name-dom.log" >&2
    exit 1
  fi
  local size
  size=$(stat -c %s "$out/$name.png" 2>/dev/null || echo 0)
  if [[ "$size" -lt 10000 ]] ||
    [[ "$(head -c 8 "$out/$name.png" | od -An -tx1 | tr -d ' \n')" != "89504e470d0a1a0a" ]]; then
    echo "report-check: $out/$name.png is missing, empty or not a PNG ($size bytes)" >&2
    exit 1
  fi
  # The reports write nothing to the console: any console message (Chromium logs errors and
  # console.error alike as INFO:CONSOLE) or uncaught exception fails the check.
  if grep -E "Uncaught|:CONSOLE" "$out/$name-screenshot.log" "$out/$name-dom.log"; then
    echo "report-check: $name.html logged to the console (above)" >&2
    exit 1
  fi
  local section
  for section in "$@"; do
    if ! grep -qF "$section" "$out/$name-dom.html"; then
      echo "report-check: the rendered $name.html lacks $section" >&2
      exit 1
    fi
  done
  echo "report-check: $out/$name.png ($size bytes), no console errors, all sections rendered"
}

check plan "<h1>Drain plan for" "<h2>Seeds</h2>" "<h2>Moves" "<h2>Cannot move" "<details>" "<svg"
check simulate "<h1>Simulated placement" "<h2>Seeds</h2>" "<h2>Placements" "<h2>Unschedulable" \
  "<details>" "<svg"
check compare "<h1>Configuration comparison" "<h2>Summary per configuration</h2>" \
  "<h3>Shoots per region</h3>" "<h2>Placed differently" "<details>"
check replay "<h1>Landscape after replay" "<h2>Seeds</h2>" "<h2>Placements" "<svg"
check explain "<h1>Explain garden-webshop/pos-jp" "<h2>Recorded decision</h2>" "<h2>Decided now</h2>" \
  "<h2>Nearest seed" "View: "
check explain-bound "<h1>Explain garden-webshop/storefront" "<h2>Feasible seeds now" \
  "Its seed aws-eu1 ranks" "<svg" "View: "

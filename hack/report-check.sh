#!/usr/bin/env bash
# Renders the example landscape's HTML reports, every page src/report/pages.tsv lists (`plan drain
# … -o html`, `simulate -o html`, with `--compare` and with `--replay`, `explain -o html` of a
# pending and of a bound shoot, and the page of a deferral in a freeze window), in headless Chromium and fails unless each screenshot is a
# non-empty PNG, the rendered DOM has the sections the table names, and the browser logged no
# console errors. Chromium is required: a missing or failing browser fails the check, it never
# skips.
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
pages=src/report/pages.tsv
# {frozen}: a freeze window around $now, then the built-in profile
frozen="$out/frozen.yaml"
cat >"$frozen" <<'EOF'
apiVersion: scheduler.config.gardener.cloud/v1alpha1
kind: SchedulerConfiguration
schedulers:
  shoot:
    profiles:
    - id: release-freeze
      schedule:
        between: {start: "2026-11-30T00:00:00Z", end: "2026-12-02T00:00:00Z"}
      freeze: true
    - id: default
      profile: {}
EOF

# words NAME WORD...: the table's arguments of page NAME for example/landscape/, the words in
# braces replaced, into the array `args`.
words() {
  local name="$1" word
  shift
  args=()
  for word in "$@"; do
    case "$word" in
    '{drain}') args+=(aws-eu1 aws-jp1 az-weu1) ;;
    '{pending}') args+=(garden-webshop/pos-jp) ;;
    '{bound}') args+=(garden-webshop/storefront) ;;
    '{config}') ;;
    '{frozen}') args+=(--config "$frozen") ;;
    '{compare}')
      args+=(--config example/20-componentconfig-weighted.yaml
        --compare example/20-componentconfig-gardener-scheduler.yaml)
      ;;
    '{'*)
      echo "report-check: $pages: page $name: no value for $word" >&2
      exit 1
      ;;
    *) args+=("$word") ;;
    esac
  done
}

mapfile -t rows < <(grep -v -e '^#' -e '^$' "$pages")
if [[ ${#rows[@]} -eq 0 ]]; then
  echo "report-check: $pages lists no page" >&2
  exit 1
fi
for row in "${rows[@]}"; do
  IFS=$'\t' read -r -a fields <<<"$row"
  if [[ ${#fields[@]} -lt 3 ]]; then
    echo "report-check: $pages: the line of ${fields[0]} names no section" >&2
    exit 1
  fi
  read -r -a command <<<"${fields[1]}"
  words "${fields[0]}" "${command[@]}"
  "$bin" "${args[@]}" -f example/landscape/ --now "$now" -o html </dev/null >"$out/${fields[0]}.html"
done

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

for row in "${rows[@]}"; do
  IFS=$'\t' read -r -a fields <<<"$row"
  check "${fields[0]}" "${fields[@]:2}"
done

#!/usr/bin/env bash
# Checks every relative link and anchor in the repository's Markdown files (README.md, docs/ and
# the other pages): a link to a missing file, or to a heading that a page does not have, fails.
# Links to other sites are not followed, so the check runs offline.
#
#   hack/link-check.sh [FILE|DIR ...]     (default: every tracked *.md file)
#
# The checker is remark with remark-validate-links, at the versions of hack/link-check/
# package-lock.json, installed from npm into a cache outside the repository the first time.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if ! command -v npm >/dev/null 2>&1; then
  echo "link-check: npm is required (hack/ensure-package.sh nodejs node npm npm installs it)" >&2
  exit 1
fi
lock=hack/link-check/package-lock.json
digest="$(cat hack/link-check/package.json "$lock" | sha256sum | cut -c1-12)"
CACHE="${HACK_TOOLS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/gardener-scheduler/tools}"
dir="$CACHE/link-check-$digest"

if [[ ! -x "$dir/node_modules/.bin/remark" ]]; then
  mkdir -p "$CACHE"
  work="$(mktemp -d "$CACHE/.link-check.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  echo "link-check: installing remark-cli and remark-validate-links from npm" >&2
  cp hack/link-check/package.json "$lock" "$work/"
  npm ci --prefix "$work" --no-audit --no-fund --loglevel=error >&2
  # Publish atomically so that a concurrent or interrupted run never leaves half an install.
  if ! mv -T "$work" "$dir" 2>/dev/null; then
    [[ -x "$dir/node_modules/.bin/remark" ]] || { echo "link-check: could not install into $dir" >&2; exit 1; }
  fi
  trap - EXIT
fi

if (($# == 0)); then
  mapfile -t files < <(git ls-files '*.md')
  set -- "${files[@]}"
fi
# repository:false: links are checked against the files here, never against a hosting site.
"$dir/node_modules/.bin/remark" --no-config --no-stdout --quiet --frail --no-color \
  --use "$dir/node_modules/remark-validate-links/index.js=repository:false" "$@"
echo "link-check: every relative link and anchor resolves ($# file(s) or folder(s) checked)"

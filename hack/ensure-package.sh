#!/usr/bin/env bash
# Makes sure a command from a Debian package is on PATH, installing the package when it is
# missing and this user may install packages (root, or sudo without a password); otherwise it
# fails at once, naming the one command to run. `make test` calls it before anything slow, so a
# missing tool is reported in seconds, not after the tests.
#
#   hack/ensure-package.sh PACKAGE COMMAND     e.g. hack/ensure-package.sh chromium chromium
set -euo pipefail
package="$1"
command="$2"

if command -v "$command" >/dev/null 2>&1; then
  exit 0
fi
if [[ "$(id -u)" == 0 ]]; then
  sudo_cmd=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo_cmd=(sudo)
else
  echo "ensure-package: '$command' is missing and this user cannot install packages; run: sudo apt-get install -y $package" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-package: '$command' is missing and there is no apt-get; install the Debian package '$package' (or its equivalent)" >&2
  exit 1
fi
echo "ensure-package: installing $package (for '$command')" >&2
export DEBIAN_FRONTEND=noninteractive
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
if ! { "${sudo_cmd[@]}" apt-get update -qq && "${sudo_cmd[@]}" apt-get install -y -qq "$package"; } >"$log" 2>&1; then
  tail -n 30 "$log" >&2
  echo "ensure-package: installing $package failed (above)" >&2
  exit 1
fi
command -v "$command" >/dev/null 2>&1 || {
  echo "ensure-package: installed $package, but '$command' is still not on PATH" >&2
  exit 1
}

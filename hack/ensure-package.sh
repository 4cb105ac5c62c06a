#!/usr/bin/env bash
# Makes sure commands from Debian packages are on PATH, installing the packages that are missing
# when this user may install packages (root, or sudo without a password); otherwise it fails at
# once, naming the one command that installs all of them. `make test` calls it before anything
# slow, so a missing tool is reported in seconds, not after the tests.
#
#   hack/ensure-package.sh PACKAGE COMMAND [PACKAGE COMMAND ...]
#   e.g. hack/ensure-package.sh chromium chromium prometheus promtool
set -euo pipefail
if (($# == 0 || $# % 2 != 0)); then
  echo "usage: hack/ensure-package.sh PACKAGE COMMAND [PACKAGE COMMAND ...]" >&2
  exit 2
fi

missing=() # packages
commands=() # the command each missing package is for
while (($#)); do
  if ! command -v "$2" >/dev/null 2>&1; then
    missing+=("$1")
    commands+=("$2")
  fi
  shift 2
done
((${#missing[@]})) || exit 0
what="${missing[*]} (for ${commands[*]})"

if [[ "$(id -u)" == 0 ]]; then
  sudo_cmd=()
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
  sudo_cmd=(sudo)
else
  echo "ensure-package: missing ${commands[*]} and this user cannot install packages; run: sudo apt-get install -y ${missing[*]}" >&2
  exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "ensure-package: missing ${commands[*]} and there is no apt-get; install the Debian packages ${missing[*]} (or their equivalents)" >&2
  exit 1
fi
echo "ensure-package: installing $what" >&2
export DEBIAN_FRONTEND=noninteractive
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
# another install running at the same time (a second make, the system's own updates) holds
# dpkg's lock: wait for it rather than fail
lock=(-o DPkg::Lock::Timeout=600)
if ! { "${sudo_cmd[@]}" apt-get "${lock[@]}" update -qq && "${sudo_cmd[@]}" apt-get "${lock[@]}" install -y -qq "${missing[@]}"; } >"$log" 2>&1; then
  tail -n 30 "$log" >&2
  echo "ensure-package: installing ${missing[*]} failed (above)" >&2
  exit 1
fi
for command in "${commands[@]}"; do
  command -v "$command" >/dev/null 2>&1 || {
    echo "ensure-package: installed ${missing[*]}, but '$command' is still not on PATH" >&2
    exit 1
  }
done

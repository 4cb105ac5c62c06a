#!/usr/bin/env bash
# Instructions per decision, counted by callgrind: a measure that does not move with the load
# of the machine. Prints a markdown table; needs valgrind (Debian package `valgrind`).
#
#   hack/bench-instructions.sh                  # seeds {100,1000,10000} x shoots {1000,100000}
#   SEEDS="1000" SHOOTS="1000 1000000" DECISIONS=100 hack/bench-instructions.sh
#   BENCH_PATH=reference hack/bench-instructions.sh   # the reference pipeline, schedule()
set -euo pipefail
cd "$(dirname "$0")/.."

SEEDS=${SEEDS:-"100 1000 10000"}
SHOOTS=${SHOOTS:-"1000 100000"}
DECISIONS=${DECISIONS:-200}

command -v valgrind >/dev/null || { echo "valgrind not found: apt-get install valgrind" >&2; exit 1; }

bin=$(cargo bench --locked --bench instructions --no-run --message-format=json 2>/dev/null \
  | grep '"kind":\["bench"\]' | grep '"name":"instructions"' \
  | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
[ -x "$bin" ] || { echo "could not build benches/instructions.rs" >&2; exit 1; }

count() { # seeds shoots profile -> instructions per decision
  local out
  out=$(BENCH_SEEDS=$1 BENCH_SHOOTS=$2 BENCH_DECISIONS=$DECISIONS BENCH_PROFILE=$3 \
    valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect='*decide_all*' \
    "$bin" 2>&1) || { echo "$out" >&2; exit 1; }
  local total
  total=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' <<<"$out")
  if [ -z "$total" ] || [ "$total" -eq 0 ]; then
    echo "no instructions counted for seeds=$1 shoots=$2 profile=$3:" >&2
    echo "$out" >&2
    return 1
  fi
  echo $((total / DECISIONS))
}

echo "| seeds | existing shoots | weighted profile, instructions/decision | upstream-equivalent profile, instructions/decision |"
echo "| --- | --- | --- | --- |"
for seeds in $SEEDS; do
  for shoots in $SHOOTS; do
    weighted=$(count "$seeds" "$shoots" weighted)
    upstream=$(count "$seeds" "$shoots" upstream)
    echo "| $seeds | $shoots | $weighted | $upstream |"
  done
done
echo
path=decide; [ "${BENCH_PATH:-}" = reference ] && path=schedule
echo "($DECISIONS decisions per cell through \`$path()\`, landscapes as in \`make bench\`; callgrind counts only the decisions, not building the landscape.)"

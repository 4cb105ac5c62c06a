#!/usr/bin/env bash
# Instructions per decision, counted by callgrind: a measure that does not move with the load
# of the machine. Prints section 7 of docs/performance.md (markdown: the counts, the earlier
# counts and targets next to them, what the production decision does and what bounds its
# cost) and, with the documented cells, rewrites that section's generated block in the page;
# needs valgrind (Debian package `valgrind`).
#
#   hack/bench-instructions.sh                  # seeds {100,1000,10000} x shoots {1000,100000}
#   SEEDS="1000" SHOOTS="1000 1000000" DECISIONS=100 hack/bench-instructions.sh
#   (cells of 10,000 seeds or more run DECISIONS_LARGE decisions, default 20: callgrind is slow)
#   BENCH_PATH=reference hack/bench-instructions.sh   # explain mode, schedule()
#   FAILED_SEEDS="" hack/bench-instructions.sh  # without the row of failed decisions
set -euo pipefail
cd "$(dirname "$0")/.."

# Any cell setting other than the documented one: the page keeps its section (below).
CELLS_SET="${SEEDS:-}${SHOOTS:-}${DECISIONS:-}${DECISIONS_LARGE:-}${BENCH_PATH:-}${FAILED_SEEDS+set}"
SEEDS=${SEEDS:-"100 1000 10000"}
SHOOTS=${SHOOTS:-"1000 100000"}
# The row of decisions that find no seed (BENCH_ONLY=failed), at these seeds x 100,000 shoots,
# upstream-equivalent profile (under the weighted one, with every region scored, hardly a shoot of
# these landscapes fits nowhere, and finding one takes thousands of decisions under callgrind).
FAILED_SEEDS=${FAILED_SEEDS-"10000"}
FAILED_SHOOTS=100000
DECISIONS=${DECISIONS:-200}
DECISIONS_LARGE=${DECISIONS_LARGE:-20}
decisions() { if [ "$1" -ge 10000 ]; then echo "$DECISIONS_LARGE"; else echo "$DECISIONS"; fi; }

hack/ensure-package.sh valgrind valgrind

bin=$(cargo bench --locked --bench instructions --no-run --message-format=json 2>/dev/null \
  | grep '"kind":\["bench"\]' | grep '"name":"instructions"' \
  | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p' | tail -1)
[ -x "$bin" ] || { echo "could not build benches/instructions.rs" >&2; exit 1; }

count() { # seeds shoots profile -> instructions per decision
  local out n
  n=$(decisions "$1")
  out=$(BENCH_SEEDS=$1 BENCH_SHOOTS=$2 BENCH_DECISIONS=$n BENCH_PROFILE=$3 \
    valgrind --tool=callgrind --callgrind-out-file=/dev/null --toggle-collect='*decide_all*' \
    "$bin" 2>&1) || { echo "$out" >&2; exit 1; }
  local total
  total=$(sed -n 's/.*Collected : \([0-9]*\).*/\1/p' <<<"$out")
  if [ -z "$total" ] || [ "$total" -eq 0 ]; then
    echo "no instructions counted for seeds=$1 shoots=$2 profile=$3:" >&2
    echo "$out" >&2
    return 1
  fi
  echo $((total / n))
}

# Counted once per cell; the tables below read them back.
declare -A counted
for seeds in $SEEDS; do
  for shoots in $SHOOTS; do
    counted[$seeds,$shoots,weighted]=$(count "$seeds" "$shoots" weighted)
    counted[$seeds,$shoots,upstream]=$(count "$seeds" "$shoots" upstream)
  done
done
# Failed decisions only.
declare -A failed
for seeds in $FAILED_SEEDS; do
  failed[$seeds]=$(BENCH_ONLY=failed count "$seeds" "$FAILED_SHOOTS" upstream)
done

path=decide_within
case "${BENCH_PATH:-}" in reference) path=schedule ;; unbounded) path=decide ;; esac
commit=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)
group() { sed ':a;s/\B[0-9]\{3\}\>/,&/;ta' <<<"$1"; }

report="$(mktemp)"
trap 'rm -f "$report"' EXIT
{
cat <<TEXT
## 7. Instructions per decision

The timings above move with the load of this shared machine (compare the runs of one cell across reports). Callgrind's instruction count does not: \`make bench-instructions\` (\`hack/bench-instructions.sh\`, needs valgrind) builds the same landscapes as section 1 and counts only the instructions of the decisions, for the weighted and the upstream-equivalent profile. Decisions go through \`decide_within()\` with the default \`decisionBudget\` of 5 s, as the scheduler process calls it (the deadline is looked at after each stage and every 16 seeds of a stage that asks its filter per seed); \`BENCH_PATH=unbounded\` counts \`decide()\`, the same decision without a deadline, and \`BENCH_PATH=reference hack/bench-instructions.sh\` counts \`schedule()\` instead, the same pipeline in explain mode (every stage over every seed, every rejection and every score detail recorded), which \`simulate\` (\`--explain\`, \`-o json\`) and \`plan\` run.

Counted at commit \`$commit\` through \`$path()\`:

| seeds | existing shoots | decisions counted | weighted profile, instructions/decision | upstream-equivalent profile, instructions/decision |
| --- | --- | --- | --- | --- |
TEXT
for seeds in $SEEDS; do
  for shoots in $SHOOTS; do
    echo "| $(group "$seeds") | $(group "$shoots") | $(decisions "$seeds") | $(group "${counted[$seeds,$shoots,weighted]}") | $(group "${counted[$seeds,$shoots,upstream]}") |"
  done
done

# Earlier counts of the same cells, one column per commit ("-": not counted), and the targets
# set for this work (200 decisions per cell; the 10,000-seed cells of 9e5aeb6: 20):
#   039d585  every decision through the reference pipeline
#   ad03cab  the first decide(): candidates from the provider/region index, no columns
#   4527d4a  decide() on per-seed columns, flat score arrays, failures counted without the
#            reference pipeline, usage priced per decision
#   9e5aeb6  usage priced per seed in the columns, the stages in one pass per run of per-seed
#            stages with the seed flags, one vector per priority
#   6f3b340  decide() before the decision became one pipeline in two modes
#   f2e2555  one pipeline in two modes, a failure listing every rejection
#   c24e18d  decide_within(), before the filters declared their own per-seed columns
BEFORE="
seeds shoots profile 039d585 ad03cab 4527d4a 9e5aeb6 6f3b340 f2e2555 c24e18d target
100 1000 weighted 458141 323926 131544 121390 79028 81302 86870 -
100 1000 upstream 272935 49237 37457 37872 31499 27014 25889 -
100 100000 weighted 468699 334616 151673 126548 83942 86485 91938 -
100 100000 upstream 273798 49826 37934 38790 31995 27489 26361 -
1000 1000 weighted 4258362 3028781 616550 579123 295654 308881 307711 -
1000 1000 upstream 2507004 205803 86416 85874 53084 43806 41726 -
1000 100000 weighted 4387895 3153167 809929 591923 305109 318179 315633 350000
1000 100000 upstream 2536938 207081 83628 83148 50354 41017 38838 70000
10000 1000 weighted - 31546093 - 5405506 2691554 2737047 2640045 -
10000 1000 upstream - 1770889 - 1647001 1156993 690758 452017 -
10000 100000 weighted - 32458453 - 5520433 2774840 2840605 2743227 3500000
10000 100000 upstream - 1765421 - 1533263 1029264 584007 345942 -
"
# before SEEDS SHOOTS PROFILE COLUMN -> the count, or nothing
before() {
  awk -v s="$1" -v n="$2" -v p="$3" -v c="$4" '
    NR == 2 { for (i = 1; i <= NF; i++) col[$i] = i }
    $1 == s && $2 == n && $3 == p && $col[c] != "-" { print $col[c] }' <<<"$BEFORE"
}
or_dash() { if [ -n "$1" ]; then group "$1"; else echo "–"; fi; }

cat <<TEXT

Before and after: the reference pipeline for every decision (commit \`039d585\`), the first \`decide()\` with candidates from the provider/region index only (commit \`ad03cab\`), \`decide()\` on the per-seed columns with usage priced per decision (commit \`4527d4a\`), \`decide()\` with the usage priced per seed in the columns and one pass per run of stages (commit \`9e5aeb6\`), \`decide()\` before the decision became one pipeline in two modes (commit \`6f3b340\`), the one pipeline as first counted (commit \`f2e2555\`), before the filters declared their own per-seed columns (commit \`c24e18d\`), and this count; the targets are those set for the decision cost:

| seeds × existing shoots | profile | every decision through \`schedule()\` (\`039d585\`) | \`decide()\` with the region index (\`ad03cab\`) | \`decide()\` on columns (\`4527d4a\`) | \`decide()\`, usage priced per seed (\`9e5aeb6\`) | \`decide()\` before one pipeline (\`6f3b340\`) | one pipeline (\`f2e2555\`) | before declared columns (\`c24e18d\`) | \`$path()\` now (\`$commit\`) | target | met |
| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |
TEXT
for seeds in $SEEDS; do
  for shoots in $SHOOTS; do
    for profile in weighted upstream; do
      now=${counted[$seeds,$shoots,$profile]}
      t=$(before "$seeds" "$shoots" "$profile" target)
      met="–"
      if [ -n "$t" ]; then
        if [ "$now" -le "$t" ]; then met=yes; else met="**no**"; fi
      fi
      name=$profile; [ "$profile" = upstream ] && name=upstream-equivalent
      echo "| $(group "$seeds") × $(group "$shoots") | $name | $(or_dash "$(before "$seeds" "$shoots" "$profile" 039d585)") | $(or_dash "$(before "$seeds" "$shoots" "$profile" ad03cab)") | $(or_dash "$(before "$seeds" "$shoots" "$profile" 4527d4a)") | $(or_dash "$(before "$seeds" "$shoots" "$profile" 9e5aeb6)") | $(or_dash "$(before "$seeds" "$shoots" "$profile" 6f3b340)") | $(or_dash "$(before "$seeds" "$shoots" "$profile" f2e2555)") | $(or_dash "$(before "$seeds" "$shoots" "$profile" c24e18d)") | $(group "$now") | $(or_dash "$t") | $met |"
    done
  done
done

if [ -n "$FAILED_SEEDS" ]; then
  # Earlier counts of the failed decisions (20 per cell) and the target set for them.
  FAILED_BEFORE="
seeds   5f13f94   f2e2555  70360d0  c24e18d  target
10000   17302583  6952605  3568308  1303388  2000000
"
  failed_before() { # seeds column
    awk -v s="$1" -v c="$2" '
      NR == 2 { for (i = 1; i <= NF; i++) col[$i] = i }
      $1 == s && $col[c] != "-" { print $col[c] }' <<<"$FAILED_BEFORE"
  }
  cat <<TEXT

Decisions that find no seed, upstream-equivalent profile (\`BENCH_ONLY=failed\`: the pending shoots of the landscape that fit nowhere, at most as many as the decisions counted, decided again inside the count): before the decision became one pipeline (commit \`5f13f94\`: every rejected seed's reason built with its own copies of the provider and region names), one pipeline with every rejection listed (commit \`f2e2555\`), the rejections counted seed by seed (commit \`70360d0\`), and now, counted per stage and reason:

| seeds × existing shoots | decisions counted | \`5f13f94\`, instructions/decision | \`f2e2555\`, instructions/decision | \`70360d0\`, instructions/decision | \`c24e18d\`, instructions/decision | \`$path()\` now (\`$commit\`) | target | met |
| --- | --- | --- | --- | --- | --- | --- | --- | --- |
TEXT
  for seeds in $FAILED_SEEDS; do
    now=${failed[$seeds]}
    t=$(failed_before "$seeds" target)
    met="–"
    if [ -n "$t" ]; then
      if [ "$now" -le "$t" ]; then met=yes; else met="**no**"; fi
    fi
    echo "| $(group "$seeds") × $(group "$FAILED_SHOOTS") | $(decisions "$seeds") | $(or_dash "$(failed_before "$seeds" 5f13f94)") | $(or_dash "$(failed_before "$seeds" f2e2555)") | $(or_dash "$(failed_before "$seeds" 70360d0)") | $(or_dash "$(failed_before "$seeds" c24e18d)") | $(group "$now") | $(or_dash "$t") | $met |"
  done
fi

cat <<'TEXT'

One decision pipeline runs every decision, in two modes over the same stages in the same order (`src/schedule/pipeline.rs`; no code outside a plugin's file names the plugin): explain mode (`schedule()`) records every rejection and every score detail; fast mode (`decide()`, `decide_within()`) records verdicts and totals. What fast mode does that explain mode does not:

- The region strategy that ends the pipeline names its candidates as positions in the snapshot's columns (`SetStep::candidates`): `SameRegion` the seeds of the shoot's (provider type, region) group, `purpose: testing` those of its provider type, `RegionPrefix` and `MinimalDistance` the groups in order of preference. The other stages run on one tier of candidates at a time until a tier has seeds left; seeds the strategy cannot keep are never evaluated. `Scored` keeps every seed: fast mode starts from the seeds of the provider types the shoot's CloudProfile allows (the provider filter answers `Keyed` over the columns' partition by provider type, whose members replace it).

- The snapshot keeps its seeds in flat arrays (`SeedColumns`, positions in name order), built on first use after seeds or CloudProfiles come or go (loading a landscape builds them once, not once per seed: a test counts the builds) and updated in place when a seed changes:

| columns | what they hold | kept up to date |
| --- | --- | --- |
| provider types and (provider, region) groups | each seed's ids, the positions of each group and provider type | rebuilt when a seed comes or goes |
| capacity and usage | usage per seed and per demand class, allocatable amounts per resource | a seed's usage when one of its shoots changes |
| priced usage (`ResourceFit`'s `UsageColumn`, declared in its file) | per seed and resource, for each `ResourceFit` configuration in use | computed when a configuration first asks, then with the usage |
| seed selectors | the match of every CloudProfile's; of the 16 shoot selectors asked for lately | the shoots' computed for every seed when a decision evaluates every seed |
| declared bits (`SeedBit`) | one word per seed: usable, no emergency stop, untainted, three zones, zones not enforced, no zone preference, network defaults plain IPv4 | built when a decision first reads one, or with the landscape (`SeedColumns::build_declared`, as this bench does) |
| declared indexes (`SeedIndex`) | the seeds by zone, by default domain, by access restriction offered | the same; mended for a seed changed in place |

- Per decision, each stage is prepared once and answers for the shoot in a closed vocabulary (`FastCheck`: `Skip`, `Flag`, `FlagOnly` (the flag is the verdict: `Usable`, `EmergencyStop`, three zones for a zone-HA control plane), `FlagOr` (a flag, else a bitmap), `Keyed` (a verdict per key of a partition the columns keep), `Bitmap`, `SharedBitmap`, `Read` (the filter's function of the columns), `Ask`; `SetCheck` for set steps), declared by each filter in its own file (`fast_check`, and `check` for the verdict, its reason built only when asked); a stage that keeps every seed for the shoot (no selector, no zones asked for, no access restriction requested, no networking, no default domain above the shoot's domain, …) is left out, in both modes.

- In fast mode the per-seed stages between two set steps are one pass over the positions that reads only the columns (provider type, selector and access restriction bitmaps, capacity, the bits); a seed lacking a flag is asked only by the stages of the flags it lacks, and only stages answering `Ask` (tolerated taints, a shoot's own seed selector not yet matched) are asked per seed.

- `Zones` (with worker zones only) answers a bit, else, when every seed is evaluated, a bitmap of the seeds in a zone of the workers from its index of the seeds by zone (with few candidates the seeds enforcing zones are asked); `ZonePreference` answers `Prefer` over positions the same way; `AccessRestrictions` a bitmap of the seeds its index files under the requested restrictions; `DefaultDomain` answers `Claim`: the positions of the seeds whose default domain is above the shoot's domain and of those that own it, from its index of the seeds by default domain, so no list of seeds is built for it; other set steps get the seeds themselves.

- Each priority has one computation of its raw values, from the columns over the positions, which both modes run (`Priority::raw`: `ShootCount`, `LatencyDistance` once per (provider, region) group, `ProjectAntiAffinity` counted into an array by position (by region, summed per region), `ResourceFit` a seed at a time over its resources' columns with each rule's demand worked out when the profile is built, `CarbonIntensity` once per (location, region), `CapacityPressure` from its cached plan); explain mode has it put each seed's detail into a recorder (`Details`) as it computes the value, fast mode records nothing, so the fast path builds no details and `normalize` takes the plain values.

- Each priority's scores and raw values stay in flat arrays and the totals are summed in profile order as the reference sums them; the scores keep positions, not names: the winner is the highest total, names read and hashed only for the seeds that tie, and only the winner's breakdown is built with its details, each priority scoring the winner alone again with its detail recorded (`CapacityPressure`, whose values depend on the other candidates, records every seed's detail in its one pass instead; `Decision::ranking` holds the winner alone; `schedule()` lists every seed).

- A success builds no `Rejection`s. A decision that finds no seed among the candidates, or whose set steps need the whole set, runs every seed through every stage as explain mode does, stage by stage, each stage one loop over the seeds still left (a column check, or its filter asked), noting only the seeds each stage rejected; `ZonePreference` and `DefaultDomain` answer over positions there too, their reason carried by their answer.

- When no seed fits at all, the rejections are counted per stage and reason, not listed: a set step's shared reason once for all the seeds it dropped, a filter's one reason for every seed it rejects (`Predicate::shared_reason`: the CloudProfile selector, enforced zones, a single access restriction) once for its seeds, the provider stage once per provider type (one seed of each type asked for the reason), the other stages' seeds asked one by one (`reason::Tally`: seeds per count phrase and per hint, and the seeds that lacked room, in an order of its own whatever the order of counting).

- In that count a reason the same across seeds is one shared value (`Provider` per provider type, `OtherRegion` per region, `DefaultDomain`, `ZonePreference` and an unusable seed's reason once, the `Zones`, `CloudProfileSelector` and `AccessRestrictions` reasons built once in their `prepare`), looked at once and then counted by its address.

- The `0/N seeds are available: …` error, its hints and reason names are explain mode's; the controller's capacity refusals read the seeds that lacked room from the count.

- `tests/fast_path.rs` checks on generated landscapes, shoots and profiles (every predicate and strategy, every opt-in filter with the example arguments it declares, region ConfigMaps, CloudProfile selectors, every priority incl. `CarbonIntensity`, `CapacityPressure` and `ProjectAntiAffinity` by region, failures) that fast mode returns the same seed with the same breakdown and details, every feasible seed's total, scores and raw values as explain mode, or the same error, and that every filter's fast answer is its `filter`'s verdict on every seed.

What changed in this round (from `5f13f94`; the figures of both are in the tables above): the two implementations of the decision became one pipeline in two modes, the plugins declaring their own fast answers, with the successful decisions' cost kept within the targets.

A decision that finds no seed, at 10,000 seeds, fell from about 17.3 million instructions to 7.0 million with the pipeline (`f2e2555`: reasons the same across seeds shared instead of copied per seed, and only the rejecting stage asked for the reason, once no seed is left), then to the count above:

- every reason is now declared by the plugin that produces it and a failure in fast mode is counted (`reason::Tally`) instead of listed, since the controller reads only the count (the failure line, the hints, the reason names and the seeds that lacked room);
- every seed's pass runs stage by stage, each stage one loop over the seeds left;
- `DefaultDomain` looks the shoot's domain's suffixes up in a set of the seeds' default domains and compares one owned domain per seed instead of every default of every seed;
- `ZonePreference` answers from the flags with its reason in its answer;
- `AccessRestrictions` and an unusable seed share their reason (3.57 million at `70360d0`).

Then the rejections of a failure are noted per stage (the seeds each stage dropped) instead of a stage per seed, and counted per stage and reason (above), a filter that rejects every seed for one reason naming it (`Predicate::shared_reason`); a filter whose verdict is a seed flag answers from the flag alone (`FlagOnly`: a seed lacking it is rejected without asking); `DefaultDomain` answers a claim over positions from the columns' default-domain index instead of a verdict per seed; `Zones` and `ZonePreference` read the seeds in the workers' zones from the columns' zone index instead of looking each seed's zones up in the shoot's.

The priorities have one computation each (above): the successful decisions with the weighted profile rose by 1–3 % at 1,000 and 10,000 seeds and by 6 % at 100 seeds (each priority prepares again for the winner's breakdown; still within the targets), those with the upstream-equivalent profile fell by 4–26 %, mostly through the cheaper failures among them.

What bounds the cost of a failed decision (callgrind on the failed decisions at 10,000 seeds × 100,000 shoots at the count above, about 1.3 million per decision):

- about 0.95 million in the pass of every seed through the stages (10,000 seeds through `Usable`'s flag and the provider check, the seeds of the allowed types through the CloudProfile selector's bitmap, `DefaultDomain`'s claim, access bits, zone flags and capacity, one loop per stage, each noting the seeds it drops, and the filters asked where no column answers),
- about 0.1 million counting the rejections (the seeds of stages without one shared reason asked one by one, and counted),
- about 0.1 million in fast mode's first try on the region's candidates,
- about 0.08 million building the bitmaps of the workers' zones (for `Zones` and `ZonePreference`, once for the first try and once for every seed),
- and about 0.04 million compiling the stages' answers, twice.

The target of 2 million is met. What would take it further: compile the stages once per decision for both fast mode's first try and the pass over every seed (the zone bitmaps and other per-shoot answers are built twice now), and run the stages answered from the columns in one pass per run of stages, as fast mode's first try does, instead of one loop per stage.

What changed in the round before (1,000 seeds × 100,000 shoots, from `9e5aeb6`): the stages fell from about 244,000 to about 85,000 instructions per weighted decision (the provider index, one pass over the columns per run of stages, `ZonePreference`, enforced zones and access restrictions from the columns, a seed lacking a flag asked only by the stages of the flags it lacks) and the scoring from about 200,000 to about 160,000 (no `RawScore`s, no name clones, `ResourceFit` and `ProjectAntiAffinity` on flat arrays); the upstream-equivalent decision fell from about 83,000 to about 50,000 (candidates as column positions without a name lookup per seed, `ZonePreference` from the flags, failures that build the provider reason once per provider type and need no sort).

What bounds the remaining cost (callgrind at 1,000 seeds × 100,000 shoots, profiled at commit `6544c4d`, per decision):

- Weighted profile, about 300 instructions per seed. `Scored` keeps every seed, so every decision visits every seed of the allowed provider types (about 500 of the 1,000 on average: the aws and gcp CloudProfiles allow their own type, azure allows two): the stages cost about 80,000 (most of it the one pass over the columns and `ZonePreference`, the rest the seeds a flag does not answer, asked through their filter's `check`).
- In the weighted profile the four priorities cost about 160,000 over the feasible seeds: `ResourceFit` about 61,000 (three resources per seed, a seed at a time), `ProjectAntiAffinity` about 37,000 (finding the project's namespaces and their shoots' seeds), `LatencyDistance` about 27,000, `ShootCount` about 17,000, the four normalisations about 20,000.
- In the weighted profile, building the shoot's context takes about 4,000, preparing the filters about 4,000, and the winner's details (priced again by `ResourceFit` and `ProjectAntiAffinity`) about 17,000. Scoring all priorities in one pass per seed, and per-project seed counts kept in the columns, are what would take it further.
- Upstream-equivalent profile, about 40,000 instructions per decision: the candidates of the shoot's region through the stages (demand is Zipf over the regions, so most shoots ask for the regions with the most seeds: tens to hundreds of candidates at 1,000 seeds).
- In the upstream-equivalent profile, the rest: building the context and preparing the filters (about 8,000, and 1,000 to drop the context); matching a CloudProfile's seed selector against every seed for its first shoot (kept for the next ones: about 1,000 a decision over the 200 counted, 90,000 over the 20 counted at 10,000 seeds); and the decisions that find no seed (about 1 % of the bench's), which still list a rejection with its reason for every seed, as events, hints and capacity refusals read them (about 20,000 on the average decision).
TEXT
} >"$report"
cat "$report"

# The section, without its heading, is the generated block `instructions` of docs/performance.md,
# rewritten when the cells are the documented ones; the rest of the page stays as it is.
if [[ -n "$CELLS_SET" || "${BENCH_DOC:-}" == 0 ]]; then
  echo "bench-instructions: docs/performance.md left as it is (cells other than the documented ones, or BENCH_DOC=0)" >&2
else
  { echo; tail -n +3 "$report"; echo; } | hack/doc-block.sh docs/performance.md instructions
  echo "bench-instructions: section 7 of docs/performance.md rewritten" >&2
fi

//! `make bench-instructions`: instructions per decision, counted by callgrind.
//!
//! Timings on a shared machine move with its load; instruction counts do not. This binary builds
//! one grid cell of `benches/scheduler.rs` (`BENCH_SEEDS`, `BENCH_SHOOTS`; one value each) and runs
//! `BENCH_DECISIONS` decisions (default 200) inside [`decide_all`]; `hack/bench-instructions.sh`
//! runs it under `valgrind --tool=callgrind --toggle-collect=*decide_all*`, so only the decisions
//! are counted, not building the landscape. `BENCH_PROFILE=upstream` uses the upstream-equivalent
//! profile instead of the weighted one. `BENCH_PATH=reference` counts the pipeline in explain
//! mode (`schedule()`: every stage over every seed, rejections listed) instead of fast mode, the
//! production decision (`decide_within()` with the default `decisionBudget` of 5 s, as the
//! scheduler process calls it: the deadline is looked at after each stage);
//! `BENCH_PATH=unbounded` counts `decide()`, the same decision without a deadline. `BENCH_ONLY=failed` counts only decisions
//! that find no seed: the pending shoots are first decided outside the count, and those that fit
//! nowhere (at most `BENCH_DECISIONS` of them) are decided again inside [`decide_all`].

use std::hint::black_box;

use chrono::{DateTime, Utc};
use gardener_scheduler::api::Shoot;
use gardener_scheduler::budget::Deadline;
use gardener_scheduler::profile::Profile;
use gardener_scheduler::schedule::{Decision, FitError, decide, decide_within, schedule};
use gardener_scheduler::snapshot::Snapshot;

#[allow(dead_code)]
mod support;

use support::landscape::{self, Generator, GridSpec};
use support::profiles::{self, LatencyArgs};

type Decide = fn(&Shoot, &Snapshot, &Profile, DateTime<Utc>) -> Result<Decision, FitError>;

/// The scheduler process's decision: within the default budget.
fn production(
    shoot: &Shoot,
    snap: &Snapshot,
    profile: &Profile,
    now: DateTime<Utc>,
) -> Result<Decision, FitError> {
    let deadline = Deadline::after(std::time::Duration::from_secs(5));
    decide_within(shoot, snap, profile, now, &deadline)
}

/// The counted part: `n` decisions, each result dropped.
#[inline(never)]
fn decide_all(
    snap: &Snapshot,
    pending: &[Shoot],
    profile: &Profile,
    n: usize,
    decide: Decide,
) -> usize {
    let now: DateTime<Utc> = "2026-12-01T00:00:00Z".parse().expect("timestamp");
    (0..n)
        .filter(|k| black_box(decide(&pending[k % pending.len()], snap, profile, now)).is_ok())
        .count()
}

/// Up to `n` of the pending shoots that no seed takes, decided outside the count.
fn failing(snap: &Snapshot, pending: &[Shoot], profile: &Profile, n: usize) -> Vec<Shoot> {
    let now: DateTime<Utc> = "2026-12-01T00:00:00Z".parse().expect("timestamp");
    pending
        .iter()
        .filter(|s| matches!(decide(s, snap, profile, now), Err(FitError::NoFit { .. })))
        .take(n)
        .cloned()
        .collect()
}

fn var(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .map(|v| {
            v.replace('_', "")
                .parse()
                .unwrap_or_else(|_| panic!("{name}: not a number: {v}"))
        })
        .unwrap_or(default)
}

fn main() {
    let (seeds, shoots) = (var("BENCH_SEEDS", 1_000), var("BENCH_SHOOTS", 1_000));
    let n = var("BENCH_DECISIONS", 200);
    let profile = match std::env::var("BENCH_PROFILE").as_deref() {
        Ok("upstream") => profiles::upstream("SameRegion"),
        _ => profiles::weighted(
            "bench-weighted",
            "Scored",
            &LatencyArgs {
                matrix: support::geo::latency_matrix(&Generator::regions()),
                max_latency_ms: 300,
            },
        ),
    };
    let grid = landscape::grid(
        GridSpec {
            seeds,
            shoots,
            rng_seed: 42,
        },
        5_000,
    );
    let path: Decide = match std::env::var("BENCH_PATH").as_deref() {
        Ok("reference") => schedule,
        Ok("unbounded") => decide,
        _ => production,
    };
    let pending = match std::env::var("BENCH_ONLY").as_deref() {
        Ok("failed") => failing(&grid.snapshot, &grid.pending, &profile.profile, n),
        Ok("") | Err(_) => grid.pending,
        Ok(other) => panic!("BENCH_ONLY: not `failed`: {other}"),
    };
    assert!(
        !pending.is_empty(),
        "no pending shoot fits nowhere: nothing to count"
    );
    // The columns the profile's filters declare are built with the landscape's, as the other
    // columns are (`landscape::grid`): decisions are counted in steady state.
    grid.snapshot
        .columns()
        .build_declared(&profile.profile.columns());
    let placed = decide_all(&grid.snapshot, &pending, &profile.profile, n, path);
    println!("seeds={seeds} shoots={shoots} decisions={n} placed={placed}");
}

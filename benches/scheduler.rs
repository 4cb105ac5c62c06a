//! `make bench`: decision latency and throughput at landscape scale, the recount-per-decision
//! baseline side by side, cache memory, `simulate` peak RSS, and placement quality against the
//! offline optimum, end-to-end binding throughput through the real binary and API server, and
//! what latency a carbon saving costs. Prints a markdown report and writes it to `target/bench-report.md`, with the
//! quality chart in `target/performance-quality.svg`.
//!
//! `BENCH_QUICK=1` runs a small version in a few minutes (of which the process at landscape
//! scale, 2,000 shoots against the API server with its watch cache off and on, takes about two).
//! `BENCH_SECTIONS=latency,memory,quality,e2e,record,carbon,scale,inputs,upstream` runs a subset
//! (`latency` includes the baseline; `upstream` times Gardener's own decision code beside ours and
//! needs Go); `BENCH_SEEDS=10000 BENCH_SHOOTS=1000` picks
//! grid cells (comma-separated lists), `BENCH_UPSTREAM_SEEDS` and `BENCH_UPSTREAM_SHOOTS` those of
//! `upstream`; `BENCH_SCALE_SHOOTS=10000,50000` the rows of the
//! process at landscape scale, `BENCH_SCALE_WATCH_CACHE=off,on` the API servers each row runs on
//! (relists only with the cache off), `BENCH_SCALE_PAGES=default,2000` the list page sizes of
//! its runs at the default client limit, `BENCH_SCALE_NO_LIMIT=0` skips the run without a limit,
//! `BENCH_SCALE_DRIP=0` creates no shoots while the relist runs, `BENCH_SCALE_MODES=streaming`
//! the ways the scheduler lists (`streaming,paged` by default), `BENCH_SCALE_FAILOVER=0` skips
//! the killed leader. Profiles, off by default:
//! `BENCH_SCALE_HEAPTRACK=DIR` records each scheduler's allocations with heaptrack,
//! `BENCH_SCALE_PPROF=DIR` the API server's CPU profile over the first
//! `BENCH_SCALE_PPROF_SECONDS` (30) of each start, `BENCH_SCALE_PERF=DIR` the scheduler's.

use std::alloc::System;
use std::fmt::Write as _;
use std::hint::black_box;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use cap::Cap;
use chrono::{DateTime, Utc};
use gardener_scheduler::api::Shoot;
use gardener_scheduler::schedule::{Decision, FitError, decide};

mod e2e;
#[allow(dead_code)]
#[path = "../tests/support/largest.rs"]
mod largest;
mod support;

use support::landscape::{self, Generator, GridSpec};
use support::profiles::{self, BuiltProfile, LatencyArgs};
use support::quality::{self, Outcome, QualitySpec};
use support::report::{self, Point, Report};
use support::stats::{fmt_bytes, fmt_count, fmt_duration, fmt_rate, percentile};
use support::{baseline, carbon, geo, memory, upstream};

#[global_allocator]
static ALLOCATOR: Cap<System> = Cap::new(System, usize::MAX);

fn allocated() -> usize {
    ALLOCATOR.allocated()
}

/// Sizes and time budgets of one run.
struct Mode {
    quick: bool,
    seeds: Vec<usize>,
    shoots: Vec<usize>,
    /// time spent on timed decisions per grid cell, per profile
    target: Duration,
    target_upstream: Duration,
    target_baseline: Duration,
    min_decisions: usize,
    max_decisions: usize,
    pending: usize,
    mem_shoots: Vec<usize>,
    mem_seeds: usize,
    simulate: (usize, usize, usize),
    /// seeds, shoots, pending of the streamed-output memory target (`-o table` and `-o json`)
    simulate_large: (usize, usize, usize),
    quality: QualitySpec,
    /// shoots created at once in the end-to-end section
    e2e_shoots: usize,
    /// shoots in the API server per row of the process at landscape scale, and new shoots per burst
    scale_shoots: Vec<usize>,
    scale_burst: usize,
    /// per row of shoots: the API servers to run it on (watch cache on or off)
    scale_watch_cache: Vec<bool>,
    /// `schedulers.shoot.listPageSize` of the runs at the default client limit (`None`: default)
    scale_pages: Vec<Option<u32>>,
    /// a run without a client limit too
    scale_no_limit: bool,
    /// shoots created while the relist runs
    scale_drip: bool,
    /// how the scheduler lists in each run: `true` streaming, `false` pages
    scale_modes: Vec<bool>,
    /// a leader killed and its standby timed, after each row's runs
    scale_failover: bool,
    /// grid cells of upstream's own decision timed beside ours
    upstream_seeds: Vec<usize>,
    upstream_shoots: Vec<usize>,
    sections: Vec<String>,
}

/// The sections a run without `BENCH_SECTIONS` measures.
const ALL_SECTIONS: &[&str] = &[
    "latency", "memory", "quality", "e2e", "record", "carbon", "scale", "inputs", "upstream",
];

impl Mode {
    fn from_env() -> Mode {
        let quick = std::env::var("BENCH_QUICK").is_ok_and(|v| !v.is_empty() && v != "0");
        let sections = std::env::var("BENCH_SECTIONS")
            .unwrap_or_else(|_| ALL_SECTIONS.join(","))
            .split(',')
            .map(|s| s.trim().to_string())
            .collect();
        let quality = QualitySpec {
            shoots: if quick { 200 } else { 1000 },
            projects: if quick { 30 } else { 120 },
            load: profiles::QUALITY_LOAD,
            zipf: 1.0,
            home_share: 0.8,
            rng_seed: 2026,
        };
        if quick {
            Mode {
                quick,
                seeds: vec![10, 100],
                shoots: vec![1_000, 10_000],
                target: Duration::from_millis(150),
                target_upstream: Duration::from_millis(50),
                target_baseline: Duration::from_millis(150),
                min_decisions: 20,
                max_decisions: 2_000,
                pending: 500,
                mem_shoots: vec![10_000],
                mem_seeds: 1_000,
                simulate: (100, 2_000, 200),
                simulate_large: (300, 3_000, 100),
                quality,
                e2e_shoots: 100,
                scale_shoots: vec![2_000],
                scale_burst: 200,
                scale_watch_cache: vec![false, true],
                scale_pages: vec![None],
                scale_no_limit: true,
                scale_drip: true,
                scale_modes: vec![true, false],
                scale_failover: true,
                upstream_seeds: vec![10],
                upstream_shoots: vec![1_000],
                sections,
            }
        } else {
            Mode {
                quick,
                seeds: vec![10, 100, 1_000, 10_000],
                shoots: vec![1_000, 100_000, 1_000_000],
                target: Duration::from_millis(2_500),
                target_upstream: Duration::from_millis(1_000),
                target_baseline: Duration::from_millis(2_500),
                min_decisions: 200,
                max_decisions: 50_000,
                pending: 5_000,
                mem_shoots: vec![100_000, 1_000_000],
                mem_seeds: 10_000,
                simulate: (1_000, 100_000, 1_000),
                simulate_large: (10_000, 100_000, 2_500),
                quality,
                e2e_shoots: 1_000,
                scale_shoots: vec![0, 10_000, 50_000, 100_000],
                scale_burst: 1_000,
                scale_watch_cache: vec![false, true],
                scale_pages: vec![None],
                scale_no_limit: true,
                scale_drip: true,
                scale_modes: vec![true, false],
                scale_failover: true,
                upstream_seeds: vec![100, 1_000],
                upstream_shoots: vec![1_000, 10_000, 100_000],
                sections,
            }
        }
    }

    /// `BENCH_SEEDS` / `BENCH_SHOOTS` replace the grid axes.
    fn with_axes_from_env(mut self) -> Mode {
        let list = |var: &str| -> Option<Vec<usize>> {
            let v = std::env::var(var).ok()?;
            Some(
                v.split(',')
                    .map(|n| n.trim().replace('_', "").parse().expect("a number"))
                    .collect(),
            )
        };
        if let Some(seeds) = list("BENCH_SEEDS") {
            self.seeds = seeds;
        }
        if let Some(shoots) = list("BENCH_SHOOTS") {
            self.shoots = shoots;
        }
        if let Some(seeds) = list("BENCH_UPSTREAM_SEEDS") {
            self.upstream_seeds = seeds;
        }
        if let Some(shoots) = list("BENCH_UPSTREAM_SHOOTS") {
            self.upstream_shoots = shoots;
        }
        if let Some(shoots) = list("BENCH_SCALE_SHOOTS") {
            self.scale_shoots = shoots;
        }
        let words = |var: &str| -> Option<Vec<String>> {
            let v = std::env::var(var).ok()?;
            Some(v.split(',').map(|w| w.trim().to_string()).collect())
        };
        if let Some(servers) = words("BENCH_SCALE_WATCH_CACHE") {
            self.scale_watch_cache = servers
                .iter()
                .map(|w| match w.as_str() {
                    "on" => true,
                    "off" => false,
                    other => panic!("BENCH_SCALE_WATCH_CACHE: {other:?} is neither on nor off"),
                })
                .collect();
        }
        if let Some(pages) = words("BENCH_SCALE_PAGES") {
            self.scale_pages = pages
                .iter()
                .map(|w| match w.as_str() {
                    "default" => None,
                    n => Some(n.replace('_', "").parse().expect("a page size or default")),
                })
                .collect();
        }
        if let Ok(v) = std::env::var("BENCH_SCALE_NO_LIMIT") {
            self.scale_no_limit = v != "0";
        }
        if let Ok(v) = std::env::var("BENCH_SCALE_DRIP") {
            self.scale_drip = v != "0";
        }
        if let Some(modes) = words("BENCH_SCALE_MODES") {
            self.scale_modes = modes
                .iter()
                .map(|w| match w.as_str() {
                    "streaming" => true,
                    "paged" => false,
                    other => panic!("BENCH_SCALE_MODES: {other:?} is neither streaming nor paged"),
                })
                .collect();
        }
        if let Ok(v) = std::env::var("BENCH_SCALE_FAILOVER") {
            self.scale_failover = v != "0";
        }
        self
    }

    fn runs(&self, section: &str) -> bool {
        self.sections.iter().any(|s| s == section)
    }
}

fn now() -> DateTime<Utc> {
    "2026-12-01T00:00:00Z".parse().expect("timestamp")
}

fn progress(msg: &str) {
    eprintln!("[bench] {msg}");
}

/// CPU time this thread has used: unlike wall time it does not count time spent preempted,
/// which matters on a shared machine.
fn thread_cpu() -> Duration {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .expect("thread CPU clock");
    Duration::new(t.tv_sec() as u64, t.tv_nsec() as u32)
}

/// Per decision: wall time, thread CPU time (both include dropping the result) and the seed.
struct Samples {
    wall: Vec<Duration>,
    cpu: Vec<Duration>,
    seeds: Vec<Option<String>>,
}

fn timed(
    pending: &[Shoot],
    n: usize,
    mut decide: impl FnMut(&Shoot) -> Result<Decision, FitError>,
) -> Samples {
    let mut s = Samples {
        wall: Vec::with_capacity(n),
        cpu: Vec::with_capacity(n),
        seeds: Vec::with_capacity(n),
    };
    for k in 0..n {
        let shoot = &pending[k % pending.len()];
        let (wall, cpu) = (Instant::now(), thread_cpu());
        let seed = black_box(decide(shoot)).ok().map(|d| d.seed);
        let cpu = thread_cpu() - cpu;
        s.wall.push(wall.elapsed());
        s.cpu.push(cpu);
        s.seeds.push(seed);
    }
    s
}

/// How many decisions fill `target` of CPU time, from a short untimed warm-up of `probe`
/// decisions.
fn decisions_for(
    target: Duration,
    lo: usize,
    hi: usize,
    probe: usize,
    pending: &[Shoot],
    decide: impl FnMut(&Shoot) -> Result<Decision, FitError>,
) -> usize {
    let s = timed(pending, probe, decide);
    let per = s.cpu.iter().sum::<Duration>().as_secs_f64() / probe as f64;
    ((target.as_secs_f64() / per.max(1e-9)) as usize).clamp(lo, hi)
}

struct Timing {
    n: usize,
    cpu_median: Duration,
    cpu_p99: Duration,
    wall_median: Duration,
    wall_p99: Duration,
    /// decisions per CPU second
    per_s: f64,
}

impl Timing {
    fn of(s: &Samples) -> Timing {
        let cpu_total: Duration = s.cpu.iter().sum();
        Timing {
            n: s.cpu.len(),
            cpu_median: percentile(&s.cpu, 50.0).unwrap_or_default(),
            cpu_p99: percentile(&s.cpu, 99.0).unwrap_or_default(),
            wall_median: percentile(&s.wall, 50.0).unwrap_or_default(),
            wall_p99: percentile(&s.wall, 99.0).unwrap_or_default(),
            per_s: s.cpu.len() as f64 / cpu_total.as_secs_f64(),
        }
    }
}

struct Cell {
    seeds: usize,
    shoots: usize,
    projects: usize,
    build: Duration,
    ours: Timing,
    placed: usize,
    upstream: Timing,
    baseline: Timing,
    ours_same: Duration,
    agree: usize,
}

fn grid_cell(
    mode: &Mode,
    weighted: &BuiltProfile,
    upstream: &BuiltProfile,
    seeds: usize,
    shoots: usize,
) -> Cell {
    let start = Instant::now();
    let spec = GridSpec {
        seeds,
        shoots,
        rng_seed: 42,
    };
    let mut grid = landscape::grid(spec, mode.pending);
    let build = start.elapsed();
    let now = now();
    let (snap, pending) = (&grid.snapshot, &grid.pending);

    let ours = |s: &Shoot| decide(s, snap, &weighted.profile, now);
    let n = decisions_for(
        mode.target,
        mode.min_decisions,
        mode.max_decisions,
        20,
        pending,
        ours,
    );
    let samples = timed(pending, n, ours);
    let placed = samples.seeds.iter().filter(|c| c.is_some()).count();

    let up = |s: &Shoot| decide(s, snap, &upstream.profile, now);
    let n_up = decisions_for(
        mode.target_upstream,
        mode.min_decisions,
        mode.max_decisions,
        20,
        pending,
        up,
    );
    let upstream_samples = timed(pending, n_up, up);

    let (placed_list, names) = (&grid.placed, &grid.seed_names);
    let snap = &mut grid.snapshot;
    let mut base =
        |s: &Shoot| baseline::decide(s, snap, placed_list, names, &weighted.profile, now);
    let n_b = decisions_for(mode.target_baseline, 3, n, 1, pending, &mut base);
    let base_samples = timed(pending, n_b, &mut base);
    let agree = base_samples
        .seeds
        .iter()
        .zip(&samples.seeds)
        .filter(|(b, o)| b == o)
        .count();

    Cell {
        seeds,
        shoots,
        projects: grid.projects,
        build,
        ours: Timing::of(&samples),
        placed,
        upstream: Timing::of(&upstream_samples),
        baseline: Timing::of(&base_samples),
        ours_same: percentile(&samples.cpu[..n_b], 50.0).unwrap_or_default(),
        agree,
    }
}

fn profile_notes(p: &BuiltProfile) -> String {
    let mut s = format!(
        "`{}` with priorities {}",
        p.strategy,
        p.included
            .iter()
            .map(|i| format!("`{i}`"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    if !p.not_registered.is_empty() {
        let _ = write!(
            s,
            "; not registered in this build, so not in the profile: {}",
            p.not_registered.join(", ")
        );
    }
    for (name, why) in &p.rejected {
        let _ = write!(
            s,
            "; {name} is registered but rejected the bench's arguments ({why}), so it is not in the profile"
        );
    }
    s
}

/// Medians of the full run at commit `f29cd12`, when every decision ran the reference pipeline
/// (every stage over every seed, every rejection and score detail built): seeds, existing
/// shoots, weighted median CPU, SameRegion median CPU (µs).
const BEFORE_DECIDE: &[(usize, usize, f64, f64)] = &[
    (10, 1_000, 14.0, 6.0),
    (10, 100_000, 11.4, 5.6),
    (10, 1_000_000, 14.9, 6.1),
    (100, 1_000, 56.9, 28.1),
    (100, 100_000, 81.7, 38.3),
    (100, 1_000_000, 73.7, 30.0),
    (1_000, 1_000, 601.2, 305.5),
    (1_000, 100_000, 635.3, 308.7),
    (1_000, 1_000_000, 635.5, 311.0),
    (10_000, 1_000, 11_930.0, 5_460.0),
    (10_000, 100_000, 12_910.0, 5_540.0),
    (10_000, 1_000_000, 12_170.0, 5_460.0),
];

/// This run's medians next to those of the last run before `decide()`, for the cells both have.
fn before_decide(cells: &[Cell]) -> String {
    let mut rows = vec![
        [
            "seeds",
            "existing shoots",
            "weighted median CPU, before",
            "weighted median CPU, now",
            "SameRegion median CPU, before",
            "SameRegion median CPU, now",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for c in cells {
        let Some((_, _, weighted, same_region)) = BEFORE_DECIDE
            .iter()
            .find(|(seeds, shoots, _, _)| *seeds == c.seeds && *shoots == c.shoots)
        else {
            continue;
        };
        let us = |v: f64| fmt_duration(Duration::from_secs_f64(v / 1e6));
        rows.push(vec![
            fmt_count(c.seeds as u64),
            fmt_count(c.shoots as u64),
            us(*weighted),
            fmt_duration(c.ours.cpu_median),
            us(*same_region),
            fmt_duration(c.upstream.cpu_median),
        ]);
    }
    if rows.len() == 1 {
        return String::new();
    }
    let mut s = String::from(
        "\nBefore `decide()`: the medians of the full run at commit `f29cd12`, when every decision ran the reference \
         pipeline `schedule()`, next to this run's (same landscapes, same pending shoots; timings of two runs on this shared \
         machine compare only roughly, section 7 counts instructions):\n\n",
    );
    s.push_str(&report::table(&rows));
    s.push('\n');
    s
}

/// The weighted profile of the grid and `simulate`, with the latency matrix of the grid's regions.
fn weighted_profile() -> BuiltProfile {
    profiles::weighted(
        "bench-weighted",
        "Scored",
        &LatencyArgs {
            matrix: geo::latency_matrix(&Generator::regions()),
            max_latency_ms: 300,
        },
    )
}

fn latency_sections(mode: &Mode, report: &mut Report) {
    let weighted = weighted_profile();
    let upstream = profiles::upstream("SameRegion");
    let mut cells = Vec::new();
    for &seeds in &mode.seeds {
        for &shoots in &mode.shoots {
            progress(&format!("grid: {seeds} seeds × {shoots} shoots"));
            let c = grid_cell(mode, &weighted, &upstream, seeds, shoots);
            progress(&format!(
                "  ours median {} CPU ({} decisions), baseline median {} CPU ({} decisions), agree {}/{}",
                fmt_duration(c.ours.cpu_median),
                c.ours.n,
                fmt_duration(c.baseline.cpu_median),
                c.baseline.n,
                c.agree,
                c.baseline.n
            ));
            cells.push(c);
        }
    }

    let mut body = String::new();
    let _ = writeln!(
        body,
        "Every decision goes through `decide()`, the decision pipeline in fast mode as the scheduler runs it (section 7 says \
         what it does that explain mode, `schedule()`, does not), with the weighted profile: {}. \
         `Scored` keeps every feasible seed for scoring, so every seed is evaluated and all priorities run over every \
         feasible one (the costliest strategy). \
         The last column is the upstream-equivalent profile ({}) on the same landscape.\n",
        profile_notes(&weighted),
        upstream.describe()
    );
    let _ = writeln!(
        body,
        "Landscapes are generated with a seeded ChaCha8 RNG: providers aws/gcp/azure (50/30/20 %), their regions (the metros of the \
         placement-quality table) with Zipf demand, \
         1–3 zones, 10 % canary seeds (excluded by the gcp CloudProfile's selector), 5 % protected and 2 % dedicated taints, \
         EU access restrictions, zone-selection modes, backups, 1 % unready and 1 % invisible seeds, 80 % of seeds publishing \
         `allocatable.shoots` (1.15–2× their usage), 2 % full. Pending shoots: 60/20/15/5 % production/evaluation/development/testing, \
         15 % HA, 7 % tolerations, 3 % seed selectors, EU access requests, 2 % default domains of a specific seed.\n\n\
         Decisions do not bind (the landscape stays the same); decision *k* takes pending shoot *k* mod {} of the cell. \
         Each decision is timed alone on one thread, result dropped inside the timing, both as CPU time of the thread \
         (`CLOCK_THREAD_CPUTIME_ID`: excludes time the thread waited for a core, which matters on this shared machine; the clock read \
         costs well under 1 µs) and as wall time (`Instant`). Decisions/s = N / total CPU time, one core. \
         N is chosen so a cell takes about {} s of CPU.\n",
        mode.pending,
        mode.target.as_secs_f64()
    );
    let mut rows = vec![
        [
            "seeds",
            "existing shoots",
            "projects",
            "landscape build",
            "N",
            "placed",
            "median CPU",
            "p99 CPU",
            "median wall",
            "p99 wall",
            "decisions/s (1 core)",
            "SameRegion median CPU (N)",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for c in &cells {
        rows.push(vec![
            fmt_count(c.seeds as u64),
            fmt_count(c.shoots as u64),
            fmt_count(c.projects as u64),
            fmt_duration(c.build),
            fmt_count(c.ours.n as u64),
            format!("{:.0} %", 100.0 * c.placed as f64 / c.ours.n as f64),
            fmt_duration(c.ours.cpu_median),
            fmt_duration(c.ours.cpu_p99),
            fmt_duration(c.ours.wall_median),
            fmt_duration(c.ours.wall_p99),
            fmt_rate(c.ours.per_s),
            format!(
                "{} ({})",
                fmt_duration(c.upstream.cpu_median),
                fmt_count(c.upstream.n as u64)
            ),
        ]);
    }
    body.push_str(&report::table(&rows));
    body.push('\n');
    for &seeds in &mode.seeds {
        let row: Vec<&Cell> = cells.iter().filter(|c| c.seeds == seeds).collect();
        if let (Some(first), Some(last)) = (row.first(), row.last()) {
            let _ = writeln!(
                body,
                "- {} seeds: median CPU time at {} shoots / at {} shoots = {:.2}",
                fmt_count(seeds as u64),
                fmt_count(last.shoots as u64),
                fmt_count(first.shoots as u64),
                last.ours.cpu_median.as_secs_f64() / first.ours.cpu_median.as_secs_f64()
            );
        }
    }
    body.push_str(&before_decide(&cells));
    body.push_str(&reference_points(&cells));
    report.push_block("latency", "Decision latency and throughput", body);

    let mut body = String::new();
    let _ = writeln!(
        body,
        "The baseline recomputes seed usage from the whole shoot list for every decision, as upstream Gardener does, \
         then runs the same `decide()` with the same profile on it. Each shoot is rebuilt from a compact entry \
         (name, namespace, seed, purpose, HA type) and counted into a fresh usage index; upstream deep-copies full \
         Shoot objects (metadata, spec and status) from its informer cache instead, which allocates far more per shoot, so this \
         baseline most likely understates upstream's cost.\n\nBoth run in this process on the same landscape and the same pending \
         shoots; the baseline runs the first N of them (N chosen for about {} s of CPU per cell, at least 3), and the ratio \
         compares median CPU times over exactly those decisions. \"recount per shoot\" is (baseline − indexed) / existing shoots. \
         \"same seed\" counts decisions where both chose the same seed (or both found none).\n",
        mode.target_baseline.as_secs_f64()
    );
    let mut rows = vec![
        [
            "seeds",
            "existing shoots",
            "N",
            "baseline median CPU",
            "baseline p99 CPU",
            "baseline median wall",
            "indexed median CPU (same N)",
            "baseline / indexed",
            "recount per shoot",
            "same seed",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for c in &cells {
        rows.push(vec![
            fmt_count(c.seeds as u64),
            fmt_count(c.shoots as u64),
            fmt_count(c.baseline.n as u64),
            fmt_duration(c.baseline.cpu_median),
            fmt_duration(c.baseline.cpu_p99),
            fmt_duration(c.baseline.wall_median),
            fmt_duration(c.ours_same),
            format!(
                "{:.1}×",
                c.baseline.cpu_median.as_secs_f64() / c.ours_same.as_secs_f64()
            ),
            fmt_duration(
                c.baseline.cpu_median.saturating_sub(c.ours_same) / c.shoots.max(1) as u32,
            ),
            format!("{}/{}", c.agree, c.baseline.n),
        ]);
    }
    body.push_str(&report::table(&rows));
    report.push_block(
        "baseline",
        "Baseline: usage recounted from every shoot per decision",
        body,
    );
}

/// Published figures of other schedulers next to ours from the nearest measured cell. They
/// measure different things (their frameworks, API round trips, parallel workers), so this is
/// context, not a contest.
fn reference_points(cells: &[Cell]) -> String {
    let nearest = |seeds: usize| {
        cells
            .iter()
            .filter(|c| c.shoots == cells.iter().map(|c| c.shoots).max().unwrap_or(0))
            .min_by_key(|c| c.seeds.abs_diff(seeds))
    };
    let mut out = String::from(
        "\nReference points (published by other projects; they measure their whole framework, ours is the pure decision on one core):\n\n",
    );
    let largest = cells.iter().map(|c| c.shoots).max().unwrap_or(0);
    let around_5000: Vec<String> = cells
        .iter()
        .filter(|c| c.shoots == largest && (1_000..=10_000).contains(&c.seeds))
        .map(|c| {
            format!(
                "{} decisions/s at {} seeds",
                fmt_rate(c.ours.per_s),
                fmt_count(c.seeds as u64)
            )
        })
        .collect();
    if !around_5000.is_empty() {
        let _ = writeln!(
            out,
            "- kube-scheduler's CI requires at least 680–810 pods/s at 5,000 nodes (16 parallel filter workers, scores a sample of the nodes). \
             Here, with {} shoots, on one core: {}.",
            fmt_count(largest as u64),
            around_5000.join(", ")
        );
    }
    if let Some(c) = nearest(100) {
        let _ = writeln!(
            out,
            "- Karmada reports 12/15/32 ms (p50/p90/p99) per scheduling decision at 100 clusters. Here, at {} seeds: {} median, {} p99 (CPU).",
            fmt_count(c.seeds as u64),
            fmt_duration(c.ours.cpu_median),
            fmt_duration(c.ours.cpu_p99)
        );
    }
    if let Some(c) = nearest(1_000) {
        let _ = writeln!(
            out,
            "- Open Cluster Management placed 100,000 placements in about 255 s (≈ 390/s). Here, 100,000 decisions at {} seeds would take {:.0} s of one core.",
            fmt_count(c.seeds as u64),
            100_000.0 / c.ours.per_s
        );
    }
    out.push_str(
        "- Upstream Gardener deep-copies and scans the whole shoot list on every decision: see the baseline section.\n",
    );
    out
}

/// `simulate` on a large landscape, measured before the other sections grow this process (see
/// [`memory::SimulateRun::bench_rss_kib`]).
fn simulate_run(mode: &Mode, target: &Path) -> memory::SimulateRun {
    let (seeds, shoots, pending) = mode.simulate;
    progress(&format!("simulate: {shoots} shoots"));
    let weighted = weighted_profile();
    memory::simulate_rss(target, &weighted.config, seeds, shoots, pending)
}

/// `simulate -o table` and `-o json` on the large landscape of the memory target, each run
/// measured by a fresh copy of this binary as its parent.
fn simulate_large_run(mode: &Mode, target: &Path) -> (u64, Vec<memory::LargeRun>) {
    let (seeds, shoots, pending) = mode.simulate_large;
    progress(&format!(
        "simulate: {seeds} seeds × {shoots} shoots, {pending} pending, -o table and -o json"
    ));
    let bench = std::env::current_exe().expect("the bench binary");
    memory::simulate_large_rss(
        &bench,
        target,
        &weighted_profile().config,
        mode.simulate_large,
    )
}

fn memory_section(
    mode: &Mode,
    run: &memory::SimulateRun,
    large: &(u64, Vec<memory::LargeRun>),
    report: &mut Report,
) {
    let mut body = String::new();
    let _ = writeln!(
        body,
        "Measured with a counting global allocator (`cap`): live bytes after upserting K objects minus before, divided by K. \
         Shoots are generated with the landscape generator (1,000 seeds) and dropped after the upsert: the cache keeps only \
         the usage index (per shoot: its key, seeds, namespace and demand class; per seed: counts by namespace and class). \
         The scheduler process's cache (`controller::Cache`) adds its map of known shoots; for a pending shoot it also keeps \
         the compact form the decision reads and the object as the API server sent it (JSON without managedFields), which the \
         bind sends back; a bound shoot keeps neither (rows \"scheduler cache\"; generated shoots are smaller than real ones, \
         whose object as sent is typically a few kB).\n"
    );
    let mut rows = vec![
        ["object", "K", "bytes per object", "total"]
            .map(String::from)
            .to_vec(),
    ];
    for &k in &mode.mem_shoots {
        progress(&format!("memory: {k} shoots"));
        let b = memory::bytes_per_shoot(allocated, 1_000, k);
        rows.push(vec![
            "cached shoot (usage index)".into(),
            fmt_count(k as u64),
            format!("{b:.0}"),
            fmt_bytes(b * k as f64),
        ]);
    }
    // The scheduler process's cache: bound shoots stay compact; pending ones also keep the object
    // as sent, to bind from.
    let k = mode.mem_shoots[0];
    for (pending, what) in [
        (false, "scheduler cache, bound shoot (usage index + key)"),
        (
            true,
            "scheduler cache, pending shoot (compact form + object as sent)",
        ),
    ] {
        progress(&format!("memory: {k} {what}"));
        let b = memory::bytes_per_controller_shoot(allocated, 1_000, k, pending);
        rows.push(vec![
            what.into(),
            fmt_count(k as u64),
            format!("{b:.0}"),
            fmt_bytes(b * k as f64),
        ]);
    }
    progress(&format!("memory: {} seeds", mode.mem_seeds));
    let b = memory::bytes_per_seed(allocated, mode.mem_seeds);
    rows.push(vec![
        "cached seed (parsed SeedInfo)".into(),
        fmt_count(mode.mem_seeds as u64),
        format!("{b:.0}"),
        fmt_bytes(b * mode.mem_seeds as f64),
    ]);
    body.push_str(&report::table(&rows));

    let peak = if run.peak_rss_kib > run.bench_rss_kib {
        format!(
            "**{}** (`getrusage(RUSAGE_CHILDREN).ru_maxrss` after the child exited; the bench starts no other child before it, \
             and runs this first, while its own peak RSS is {}: Linux charges a parent's peak to a child spawned with a shared \
             address space when it execs, so only a figure above that is the child's own)",
            fmt_bytes(run.peak_rss_kib as f64 * 1024.0),
            fmt_bytes(run.bench_rss_kib as f64 * 1024.0)
        )
    } else {
        format!(
            "**at most {}**: not measured apart from the bench's own peak RSS ({}), which Linux charges to a child spawned \
             with a shared address space when it execs",
            fmt_bytes(run.peak_rss_kib as f64 * 1024.0),
            fmt_bytes(run.bench_rss_kib as f64 * 1024.0)
        )
    };
    let _ = writeln!(
        body,
        "\n`simulate` on {} shoots ({} pending, {} already placed) and {} seeds, {} of YAML manifests, with the weighted profile above \
         (release binary, `{}`):\n\n- peak RSS: {}\n\
         - wall time: {} (reading and parsing the manifests dominates)\n- result: {}",
        fmt_count(run.shoots as u64),
        fmt_count(run.pending as u64),
        fmt_count((run.shoots - run.pending) as u64),
        fmt_count(run.seeds as u64),
        fmt_bytes(run.manifest_bytes as f64),
        run.command,
        peak,
        fmt_duration(run.wall),
        run.summary.trim()
    );
    let (seeds, shoots, pending) = mode.simulate_large;
    let _ = writeln!(
        body,
        "\n`simulate` streams its output: each decision (every seed's scores and rejections) is written and dropped before \
         the next. On {} seeds and {} shoots ({} pending), {} of YAML manifests, same profile; peak RSS is \
         `getrusage(RUSAGE_CHILDREN).ru_maxrss` read by a fresh copy of the bench binary that started only this run and read \
         its output (target: at most 1 GiB for both formats):\n",
        fmt_count(seeds as u64),
        fmt_count(shoots as u64),
        fmt_count(pending as u64),
        fmt_bytes(large.0 as f64),
    );
    let mut rows = vec![
        ["output", "peak RSS", "output size", "wall time", "result"]
            .map(String::from)
            .to_vec(),
    ];
    for r in &large.1 {
        rows.push(vec![
            format!("`-o {}`", r.output),
            fmt_bytes(r.peak_rss_kib as f64 * 1024.0),
            fmt_bytes(r.output_bytes as f64),
            fmt_duration(r.wall),
            if r.summary.is_empty() {
                "-".into()
            } else {
                r.summary.trim().to_string()
            },
        ]);
    }
    body.push_str(&report::table(&rows));
    report.push_block("memory", "Cache memory", body);
}

/// Zipf exponent of the second quality landscape: the same seeds, steeper demand, so that the
/// busiest regions overflow much further.
const SKEWED_ZIPF: f64 = 1.6;
/// Quality targets of the capacity-aware profile: gap to the optimum's mean latency on the
/// first and on the second landscape.
const CAPACITY_TARGETS: (f64, f64) = (10.0, 15.0);
/// `CapacityPressure`'s default `replanThreshold`, as the prose states it.
const CAPACITY_REPLAN_THRESHOLD: f64 = 0.02;
const CAPACITY_AWARE: &str = "Scored, capacity-aware";
const CAPACITY_AWARE_SPREAD: &str = "Scored, capacity-aware + spreading";
const CAPACITY_AWARE_DEFAULT: &str = "Scored, capacity-aware, plannedUtilisation not declared";
const CAPACITY_AWARE_DEFAULT_SPREAD: &str =
    "Scored, capacity-aware, plannedUtilisation not declared + spreading";
/// The capacity-aware profiles held to [`CAPACITY_TARGETS`], each on both landscapes.
const CAPACITY_TARGETED: [&str; 2] = [CAPACITY_AWARE_DEFAULT, CAPACITY_AWARE];

/// Every profile of the quality section, in row order.
fn quality_profiles(latency: &LatencyArgs) -> Vec<(&'static str, BuiltProfile)> {
    vec![
        ("SameRegion", profiles::upstream("SameRegion")),
        (
            "MinimalDistance (Levenshtein fallback)",
            profiles::upstream("MinimalDistance"),
        ),
        ("RegionPrefix", profiles::upstream("RegionPrefix")),
        (
            "Scored, weighted profile",
            profiles::weighted("quality-weighted", "Scored", latency),
        ),
        (
            CAPACITY_AWARE,
            profiles::scored(
                "quality-capacity",
                "Scored",
                &profiles::capacity_aware(),
                latency,
            ),
        ),
        (
            CAPACITY_AWARE_SPREAD,
            profiles::scored(
                "quality-capacity-spread",
                "Scored",
                &profiles::capacity_aware_spread(),
                latency,
            ),
        ),
        (
            CAPACITY_AWARE_DEFAULT,
            profiles::scored(
                "quality-capacity-default",
                "Scored",
                &profiles::capacity_aware_default(),
                latency,
            ),
        ),
        (
            CAPACITY_AWARE_DEFAULT_SPREAD,
            profiles::scored(
                "quality-capacity-default-spread",
                "Scored",
                &profiles::capacity_aware_default_spread(),
                latency,
            ),
        ),
    ]
}

/// One landscape through every profile (each with a fresh profile, so no plan carries over)
/// and the optimum, with the time the optimum took.
fn quality_runs(
    land: &quality::QualityLandscape,
    latency: &LatencyArgs,
    tag: &str,
) -> (
    Vec<(&'static str, BuiltProfile)>,
    Vec<Outcome>,
    Outcome,
    Duration,
) {
    let strategies = quality_profiles(latency);
    let mut outcomes: Vec<Outcome> = Vec::new();
    for (label, built) in &strategies {
        progress(&format!("quality{tag}: {label}"));
        outcomes.push(quality::run(land, label, built, now()));
    }
    progress(&format!("quality{tag}: optimum"));
    let start = Instant::now();
    let opt = quality::optimum(land);
    (strategies, outcomes, opt, start.elapsed())
}

fn gap(o: &Outcome, opt: &Outcome) -> f64 {
    100.0 * (o.mean_latency() - opt.mean_latency()) / opt.mean_latency()
}

fn quality_table(
    land: &quality::QualityLandscape,
    strategies: &[(&'static str, BuiltProfile)],
    outcomes: &[Outcome],
    opt: &Outcome,
) -> String {
    let mut rows = vec![
        [
            "strategy",
            "profile",
            "unschedulable",
            "out of region",
            "mean latency",
            "p95 latency",
            "utilisation max / min",
            "max/min",
            "utilisation stddev",
            "needless co-location",
            "gap to optimum (mean)",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for o in outcomes.iter().chain(std::iter::once(opt)) {
        let (max, min) = o.util_max_min();
        rows.push(vec![
            o.label.clone(),
            o.profile.clone(),
            fmt_count(o.unschedulable as u64),
            fmt_count(o.out_of_region(land) as u64),
            format!("{:.1} ms", o.mean_latency()),
            format!("{:.1} ms", o.p95_latency()),
            format!("{:.2} / {:.2}", max, min),
            if min > 0.0 {
                format!("{:.2}", max / min)
            } else {
                "∞".into()
            },
            format!("{:.3}", o.util_stddev()),
            match o.needless_colocation {
                Some((flagged, multi)) => format!(
                    "{flagged}/{multi} projects ({:.0} %)",
                    100.0 * flagged as f64 / multi.max(1) as f64
                ),
                None => "—".into(),
            },
            match (o.label == opt.label, o.unschedulable) {
                (true, _) => "—".into(),
                (false, 0) => format!("{:+.1} %", gap(o, opt)),
                (false, _) => format!("{:+.1} % (†)", gap(o, opt)),
            },
        ]);
    }
    for (label, priority) in [
        ("Scored, weighted profile", "LatencyDistance"),
        (CAPACITY_AWARE, "CapacityPressure"),
        (CAPACITY_AWARE_SPREAD, "CapacityPressure"),
        (CAPACITY_AWARE_DEFAULT, "CapacityPressure"),
        (CAPACITY_AWARE_DEFAULT_SPREAD, "CapacityPressure"),
    ] {
        let Some((_, built)) = strategies.iter().find(|(l, _)| *l == label) else {
            continue;
        };
        if built.has(priority) {
            continue;
        }
        let why = match built.rejected.iter().find(|(n, _)| n == priority) {
            Some((_, e)) => {
                format!("{priority} is registered but rejected the bench's arguments ({e})")
            }
            None => format!("{priority} is not registered in this build"),
        };
        let mut row = vec![format!("{label} (needs {priority})"), "—".into()];
        row.push(format!("not measured: {why}"));
        row.extend(std::iter::repeat_n("—".to_string(), 8));
        rows.push(row);
    }
    report::table(&rows)
}

/// How the capacity-aware profiles did against their target, computed from the outcomes.
fn capacity_verdict(outcomes: &[Outcome], opt: &Outcome, target: f64) -> String {
    CAPACITY_TARGETED
        .iter()
        .map(|label| {
            let Some(o) = outcomes.iter().find(|o| o.label == *label) else {
                return format!("{label}: did not run");
            };
            let g = gap(o, opt);
            let met = g <= target && o.unschedulable == 0;
            format!(
                "{label}: {:+.1} % with {} unschedulable, target within {target:.0} % with 0 unschedulable: **{}**",
                g,
                o.unschedulable,
                if met { "met" } else { "not met" }
            )
        })
        .collect::<Vec<_>>()
        .join("; ")
}

/// What spreading costs the capacity-aware profiles, read from the outcomes: mean latency
/// against needless co-location, with and without `ProjectAntiAffinity` and `ResourceFit`.
fn spreading_trade_off(outcomes: &[Outcome], opt: &Outcome) -> String {
    let find = |label: &str| outcomes.iter().find(|o| o.label == label);
    let describe = |o: &Outcome| {
        let (flagged, multi) = o.needless_colocation.unwrap_or((0, 0));
        format!(
            "{:+.1} % and {:.0} % of projects needlessly co-located",
            gap(o, opt),
            100.0 * flagged as f64 / multi.max(1) as f64
        )
    };
    [
        (CAPACITY_AWARE_DEFAULT, CAPACITY_AWARE_DEFAULT_SPREAD),
        (CAPACITY_AWARE, CAPACITY_AWARE_SPREAD),
    ]
    .iter()
    .filter_map(|(plain, spread)| {
        let (p, s) = (find(plain)?, find(spread)?);
        Some(format!(
            "\"{plain}\" {}, with spreading {}",
            describe(p),
            describe(s)
        ))
    })
    .collect::<Vec<_>>()
    .join("; ")
}

fn quality_section(mode: &Mode, target: &Path, report: &mut Report) -> Option<String> {
    let land = quality::landscape(mode.quality);
    let aws: Vec<&str> = geo::LOCATIONS.iter().map(|l| l.aws).collect();
    let latency = LatencyArgs {
        matrix: geo::latency_matrix(&aws),
        max_latency_ms: 300,
    };
    let (strategies, outcomes, opt, opt_time) = quality_runs(&land, &latency, "");

    let spec = land.spec;
    let capacity: u32 = land.seeds.iter().map(|s| s.capacity).sum();
    let mut body = String::new();
    let _ = writeln!(
        body,
        "One provider (aws), the 27 regions below, {} seeds with `allocatable.shoots` capacities totalling {} slots, \
         and a stream of {} shoots (load {:.0} %) from {} projects. Regional demand is Zipf (exponent {}) over the regions in the \
         order listed; each project has a home region (drawn from the same demand) that receives {:.0} % of its shoots. \
         The stream is shuffled and placed one shoot at a time by the production `decide()`, each placement visible to \
         the next (no region ConfigMap, so MinimalDistance falls back to region-name distance). Everything is seeded.\n",
        land.seeds.len(),
        capacity,
        spec.shoots,
        100.0 * spec.load,
        spec.projects,
        spec.zipf,
        100.0 * spec.home_share
    );
    let _ = writeln!(
        body,
        "Latency model (round trip): great-circle distance × 2 / 200,000 km/s × 1.5 route factor + 2 ms, i.e. 0.015 ms per km + 2 ms; \
         a region to itself is 2 ms. The offline optimum minimises total (so mean) latency with every shoot placed and every \
         seed within capacity: the Hungarian method (`pathfinding::kuhn_munkres`) on the {} shoots × {} slots matrix \
         (one column per unit of seed capacity, costs in µs), solved in {}.\n",
        spec.shoots,
        capacity,
        fmt_duration(opt_time)
    );
    let mut body = if mode.sections.len() < 5 {
        format!(
            "This section can be regenerated on its own: `BENCH_SECTIONS={} cargo bench --locked --bench scheduler`; \
             this copy is from such a run at commit `{}` ({} mode; load average at the end {}, which moves only the timings: \
             placements are seeded and deterministic). The other sections are from the run named at the top.\n\n{body}",
            mode.sections.join(","),
            command_output("git", &["rev-parse", "--short", "HEAD"]),
            if mode.quick { "quick" } else { "full" },
            loadavg()
        )
    } else {
        body
    };
    let _ = writeln!(
        body,
        "The capacity-aware profiles use `CapacityPressure` with the weighted profile's latency matrix and `maxLatencyMs`. \
         It plans the demand still to come (up to `plannedUtilisation` × the slots, less the shoots placed, split by region \
         like the shoots placed so far) onto the free slots as a min-cost flow, re-planned after every {:.0} % of the slots \
         placed or a {:.0} % shift of the regional shares; how much of that demand arrives is unknown, so a seed's price is \
         the mean, over the plans for 1/8, 2/8, …, 8/8 of it, of what one slot less would cost the plan.\n\n\
         A decision reads the \
         prices: home seeds carry none, and of the others only the excess over the cheapest candidate's price is charged \
         (the shoot takes a slot wherever it goes). \"{CAPACITY_AWARE_DEFAULT}\" uses the default arguments \
         (`plannedUtilisation: 1`: demand may fill every slot); \"{CAPACITY_AWARE}\" declares `plannedUtilisation: {}`, this \
         landscape's load. Both add only the weighted profile's `ShootCount` tie-breaker; the \"+ spreading\" rows are the \
         weighted profile with `LatencyDistance` replaced by the respective `CapacityPressure`, i.e. with its \
         project spreading (`ProjectAntiAffinity`, `ResourceFit: LeastAllocated`).\n",
        100.0 * CAPACITY_REPLAN_THRESHOLD,
        100.0 * CAPACITY_REPLAN_THRESHOLD,
        profiles::QUALITY_LOAD
    );
    body.push_str(&quality_table(&land, &strategies, &outcomes, &opt));
    let _ = writeln!(
        body,
        "\nLatencies are shoot region → seed region by the model, averaged over placed shoots only. (†) The strategy left shoots \
         unschedulable and is not charged for them, while the optimum places every shoot: its gap is not comparable and understates its cost. Utilisation is shoots / `allocatable.shoots` per seed \
         after the stream. \"Needless co-location\": projects with at least two shoots of which one was put on a seed already hosting \
         the project while another seed with free capacity, none of the project's shoots and no higher latency for that shoot existed \
         (out of the projects with at least two placed shoots).\n"
    );
    let _ = writeln!(
        body,
        "Target: {}.\n",
        capacity_verdict(&outcomes, &opt, CAPACITY_TARGETS.0)
    );
    let _ = writeln!(
        body,
        "Spreading against latency: {}. Spreading a project's shoots over seeds sends some of them past the nearest \
         seed with room, which is what a latency target forbids; choose the weights by which matters more.\n",
        spreading_trade_off(&outcomes, &opt)
    );
    let _ = writeln!(
        body,
        "![mean latency vs utilisation spread per strategy](performance-quality.svg)\n"
    );

    // The same seeds and stream generator with a steeper demand skew.
    let skewed = quality::landscape(QualitySpec {
        zipf: SKEWED_ZIPF,
        ..mode.quality
    });
    let (strategies2, outcomes2, opt2, opt_time2) = quality_runs(&skewed, &latency, " (skewed)");
    let weights2 = landscape::zipf_weights(geo::LOCATIONS.len(), SKEWED_ZIPF);
    let top3: f64 = weights2.iter().take(3).sum::<f64>() / weights2.iter().sum::<f64>();
    let top3_slots: u32 = skewed
        .seeds
        .iter()
        .filter(|s| geo::LOCATIONS[..3].iter().any(|l| l.aws == s.region))
        .map(|s| s.capacity)
        .sum();
    let _ = writeln!(
        body,
        "### Second landscape: steeper demand skew\n\n\
         The same seeds, capacities, projects and stream length, with regional demand Zipf exponent {SKEWED_ZIPF} instead of {}: \
         the three busiest regions ask for {:.0} % of the shoots while their seeds hold {:.0} % of the slots, so their overflow \
         competes for the seeds of the next regions. Optimum solved in {}.\n",
        spec.zipf,
        100.0 * top3,
        100.0 * top3_slots as f64 / capacity as f64,
        fmt_duration(opt_time2)
    );
    body.push_str(&quality_table(&skewed, &strategies2, &outcomes2, &opt2));
    let _ = writeln!(
        body,
        "\nTarget: {}.\n",
        capacity_verdict(&outcomes2, &opt2, CAPACITY_TARGETS.1)
    );
    let _ = writeln!(
        body,
        "Spreading against latency: {}.\n",
        spreading_trade_off(&outcomes2, &opt2)
    );

    body.push_str(&robustness(mode, &latency));
    body.push_str(&capacity_recompute_cost(mode));

    let mut regions = vec![
        [
            "region",
            "metro",
            "lat",
            "lon",
            "GCP / Azure in the same metro (grid only)",
            "demand share",
            "demand share (skewed)",
            "seeds",
            "slots",
        ]
        .map(String::from)
        .to_vec(),
    ];
    let weights = landscape::zipf_weights(geo::LOCATIONS.len(), spec.zipf);
    let total_w: f64 = weights.iter().sum();
    let total_w2: f64 = weights2.iter().sum();
    for ((l, w), w2) in geo::LOCATIONS.iter().zip(&weights).zip(&weights2) {
        let here: Vec<_> = land.seeds.iter().filter(|s| s.region == l.aws).collect();
        regions.push(vec![
            format!("`{}`", l.aws),
            l.city.into(),
            format!("{:.2}", l.lat),
            format!("{:.2}", l.lon),
            format!("{} / {}", l.gcp.unwrap_or("—"), l.azure.unwrap_or("—")),
            format!("{:.1} %", 100.0 * w / total_w),
            format!("{:.1} %", 100.0 * w2 / total_w2),
            here.len().to_string(),
            here.iter().map(|s| s.capacity).sum::<u32>().to_string(),
        ]);
    }
    let _ = writeln!(
        body,
        "Regions (coordinates of the metro area; demand share before project home-region bias):\n"
    );
    body.push_str(&report::table(&regions));
    report.push_block("quality", "Placement quality", body);

    let points: Vec<Point> = outcomes
        .iter()
        .chain(std::iter::once(&opt))
        .map(|o| {
            let mut label = format!(
                "{}: {:.0} ms, stddev {:.3}",
                o.label,
                o.mean_latency(),
                o.util_stddev()
            );
            if o.unschedulable > 0 {
                let _ = write!(label, ", {} unschedulable", o.unschedulable);
            }
            Point {
                label,
                x: o.util_stddev(),
                y: o.mean_latency(),
            }
        })
        .collect();
    let svg = report::svg_chart(
        "Mean shoot-to-seed latency vs utilisation spread",
        "utilisation stddev across seeds",
        "mean latency (ms)",
        &points,
    );
    let path = target.join("performance-quality.svg");
    std::fs::write(&path, svg).expect("write chart");
    Some(path.display().to_string())
}

/// Landscapes beyond the two tables, so that the capacity-aware profiles are not judged on the
/// landscapes they were developed on: (Zipf exponent, RNG seed, load). A flatter and an
/// intermediate skew; the two skews of the tables with other RNG seeds (other seed capacities,
/// project homes and stream order); and lower and higher loads than the 87 % the profile with a
/// declared `plannedUtilisation` assumes.
const ROBUSTNESS: &[(f64, u64, f64)] = &[
    (0.6, 2026, 0.87),
    (1.3, 2026, 0.87),
    (1.0, 7, 0.87),
    (1.6, 7, 0.87),
    (1.0, 99, 0.87),
    (1.6, 99, 0.87),
    (1.0, 2026, 0.7),
    (1.6, 2026, 0.7),
    (1.0, 2026, 0.95),
    (1.6, 2026, 0.95),
];

/// The gap to the optimum of the latency-weighted and the capacity-aware profiles on each
/// [`ROBUSTNESS`] landscape.
fn robustness(mode: &Mode, latency: &LatencyArgs) -> String {
    let labels = [
        "Scored, weighted profile",
        CAPACITY_AWARE_DEFAULT,
        CAPACITY_AWARE_DEFAULT_SPREAD,
        CAPACITY_AWARE,
        CAPACITY_AWARE_SPREAD,
    ];
    let mut header = vec![
        "Zipf exponent".to_string(),
        "RNG seed".into(),
        "load".into(),
        "offline optimum".into(),
    ];
    header.extend(labels.iter().map(|l| l.to_string()));
    let mut rows = vec![header];
    // Per targeted profile: worst gap, and whether every shoot was placed everywhere.
    let mut worst: Vec<(f64, bool)> = vec![(f64::NEG_INFINITY, true); CAPACITY_TARGETED.len()];
    let mut weighted_worse = vec![0usize; CAPACITY_TARGETED.len()];
    for &(zipf, rng_seed, load) in ROBUSTNESS {
        let land = quality::landscape(QualitySpec {
            zipf,
            rng_seed,
            load,
            ..mode.quality
        });
        let tag = format!(" (Zipf {zipf}, seed {rng_seed}, load {load})");
        let mut row = vec![
            zipf.to_string(),
            rng_seed.to_string(),
            format!("{:.0} %", 100.0 * load),
        ];
        progress(&format!("quality{tag}: optimum"));
        let opt = quality::optimum(&land);
        row.push(format!("{:.1} ms", opt.mean_latency()));
        let mut weighted_gap = f64::INFINITY;
        let mut built_profiles = quality_profiles(latency);
        for label in labels {
            let Some(at) = built_profiles.iter().position(|(l, _)| *l == label) else {
                row.push("—".into());
                continue;
            };
            let (_, built) = built_profiles.swap_remove(at);
            progress(&format!("quality{tag}: {label}"));
            let o = quality::run(&land, label, &built, now());
            let g = gap(&o, &opt);
            if label == labels[0] {
                weighted_gap = g;
            }
            if let Some(i) = CAPACITY_TARGETED.iter().position(|t| *t == label) {
                worst[i].0 = worst[i].0.max(g);
                worst[i].1 &= o.unschedulable == 0;
                weighted_worse[i] += usize::from(g > weighted_gap);
            }
            row.push(match o.unschedulable {
                0 => format!("{g:+.1} %"),
                n => format!("{g:+.1} % ({n} unschedulable)"),
            });
        }
        rows.push(row);
    }
    let mut out = String::from(
        "### Other landscapes\n\n\
         The same generator with other demand skews, RNG seeds (other seed capacities, project homes and stream order) \
         and loads; every profile exactly as in the tables above. Gap of the mean latency to each landscape's offline optimum:\n\n",
    );
    out.push_str(&report::table(&rows));
    for ((label, (w, placed)), worse) in CAPACITY_TARGETED.iter().zip(worst).zip(weighted_worse) {
        let _ = writeln!(
            out,
            "\n{label}: at most {w:+.1} % over these {} landscapes, {}; worse than the latency-weighted profile on {worse} of them.",
            ROBUSTNESS.len(),
            if placed {
                "every shoot placed"
            } else {
                "with unschedulable shoots"
            }
        );
    }
    out.push('\n');
    out
}

/// What re-solving the `CapacityPressure` plan costs at 1,000 seeds: a decision with a fresh
/// profile (no plan yet: it solves) against the next decision on the same snapshot (plan
/// reused). Demand comes from shoots already placed over the 27 regions.
fn capacity_recompute_cost(mode: &Mode) -> String {
    let seeds = if mode.quick { 200 } else { 1_000 };
    let placed = seeds * 20;
    let rounds = if mode.quick { 3 } else { 7 };
    let aws: Vec<&str> = geo::LOCATIONS.iter().map(|l| l.aws).collect();
    let latency = LatencyArgs {
        matrix: geo::latency_matrix(&aws),
        max_latency_ms: 300,
    };
    let (snap, pending) = quality::pressure_landscape(seeds, placed, 2026);
    let mut cold = Vec::new();
    let mut warm = Vec::new();
    for k in 0..rounds {
        progress(&format!(
            "quality: CapacityPressure plan at {seeds} seeds, round {k}"
        ));
        let built = profiles::scored(
            "pressure",
            "Scored",
            &[&profiles::CAPACITY_PRESSURE],
            &latency,
        );
        if !built.has("CapacityPressure") {
            return "CapacityPressure is not available in this build: recomputation cost not measured.\n\n".into();
        }
        let shoot = &pending[k % pending.len()];
        let t = thread_cpu();
        black_box(decide(shoot, &snap, &built.profile, now())).ok();
        cold.push(thread_cpu() - t);
        let t = thread_cpu();
        black_box(decide(shoot, &snap, &built.profile, now())).ok();
        warm.push(thread_cpu() - t);
    }
    let med = |v: &mut Vec<Duration>| {
        v.sort();
        v[v.len() / 2]
    };
    let (c, w) = (med(&mut cold), med(&mut warm));
    format!(
        "### Cost of re-planning\n\n\
         `CapacityPressure` solves its plans only when the seeds or their capacities change, or when more than `replanThreshold` \
         (default 2 %) of the demand has moved between regions or of the slots has been taken or freed since the last solve; \
         a decision otherwise reads cached prices. A solve is eight min-cost flows (one per share of the expected volume). \
         Measured at {seeds} seeds in the 27 regions with {} placed shoots as the demand estimate (thread CPU time, median of {rounds}): \
         a decision that solves the plan took {}, the next decision on the same snapshot {}, so one re-plan costs about {}.\n\n",
        fmt_count(placed as u64),
        fmt_duration(c),
        fmt_duration(w),
        fmt_duration(c.saturating_sub(w)),
    )
}

/// Seeds and in-flight create requests of the end-to-end section.
const E2E_SEEDS: usize = 20;
const E2E_SEED_CAPACITY: u32 = 100;
const E2E_IN_FLIGHT: usize = 32;
/// `clientConnection` defaults, as upstream.
const E2E_DEFAULT_RATE: (f32, i32) = (50.0, 100);
/// A limit far above what the test API server can take: no client-side limit in effect. (`qps: 0`
/// means the default 50, as upstream defaults it.)
const E2E_NO_LIMIT: (f32, i32) = (100_000.0, 100_000);

fn e2e_section(mode: &Mode, report: &mut Report) {
    let mut rows = vec![
        [
            "concurrentSyncs",
            "client qps / burst",
            "shoots",
            "bound",
            "creates took",
            "first create → last bind",
            "shoots bound/s",
            "create-to-bound p50",
            "create-to-bound p99",
            "main client requests per bound shoot",
            "reporter requests per bound shoot",
            "events dropped",
            "last bind → events sent",
        ]
        .map(String::from)
        .to_vec(),
    ];
    // The default client rate limit, then none: shows whether it is what bounds binding.
    let runs = [
        (1, E2E_DEFAULT_RATE),
        (5, E2E_DEFAULT_RATE),
        (20, E2E_DEFAULT_RATE),
        (5, E2E_NO_LIMIT),
        (20, E2E_NO_LIMIT),
    ];
    let mut results = Vec::new();
    for (syncs, rate) in runs {
        progress(&format!(
            "e2e: {} shoots, concurrentSyncs {syncs}, client qps {}",
            mode.e2e_shoots, rate.0
        ));
        let r = e2e::run(
            syncs,
            rate,
            E2E_SEEDS,
            E2E_SEED_CAPACITY,
            mode.e2e_shoots,
            E2E_IN_FLIGHT,
            Duration::from_secs(600),
        );
        progress(&format!(
            "  {} bound in {} ({}/s)",
            r.bound,
            fmt_duration(r.span),
            fmt_rate(r.per_s())
        ));
        rows.push(vec![
            r.concurrent_syncs.to_string(),
            if r.client_rate != E2E_NO_LIMIT {
                format!("{} / {}", r.client_rate.0, r.client_rate.1)
            } else {
                "no limit (100,000 / 100,000)".into()
            },
            fmt_count(r.shoots as u64),
            fmt_count(r.bound as u64),
            fmt_duration(r.create_span),
            fmt_duration(r.span),
            fmt_rate(r.per_s()),
            fmt_duration(percentile(&r.latencies, 50.0).unwrap_or_default()),
            fmt_duration(percentile(&r.latencies, 99.0).unwrap_or_default()),
            format!("{:.2}", r.bind_requests_per_shoot()),
            format!("{:.2}", r.report_client_requests / r.bound.max(1) as f64),
            fmt_count(r.events_dropped as u64),
            fmt_duration(r.events_lag),
        ]);
        results.push(r);
    }
    let mut body = String::new();
    let _ = writeln!(
        body,
        "The release binary against the real test API server (tests/apiserver/: crd-apiserver and etcd, started per run by the \
         end-to-end test harness, tests/support/mod.rs), one fresh server per row. {E2E_SEEDS} ready seeds with `allocatable.shoots` \
         {E2E_SEED_CAPACITY} each, all in the shoots' region; the scheduler runs with leader election off, `bindingMode: Binding`, the \
         default strategy and priorities and debug logging to a file. Once `/readyz` answers, the bench creates {} shoots of one project \
         as fast as it can, at most {E2E_IN_FLIGHT} create requests in flight, and takes each shoot's bind time from a watch on shoots \
         (the first event showing `spec.seedName`). Create-to-bound runs from sending the create request to that watch event; shoots \
         bound/s = bound / (last bind − first create sent).\n\n\
         Requests per bound shoot come from the scheduler's own counters at the \
         end of the run: its main client (the one whose `clientConnection` limit the binds pass: the watches' lists and watches, \
         binds, reads after a conflict) is `rest_client_requests_total` minus the reporter's \
         `gardener_scheduler_event_client_requests_total`; the reporter (events, `status.lastOperation`) has a client and a \
         limit of its own. Both are read once the reporter has sent (or dropped, `gardener_scheduler_events_dropped_total`) the \
         success event of every shoot, at most a minute after the last bind (column \"last bind → events sent\").\n",
        fmt_count(mode.e2e_shoots as u64)
    );
    body.push_str(&report::table(&rows));
    let _ = writeln!(
        body,
        "\nThese numbers measure the whole path on this machine, not the scheduler's decision cost (see the decision latency \
         section): the client's creation rate (column \"creates took\"), the test API server and its etcd, which share the \
         machine's cores with the scheduler and this client, and the scheduler's client-side rate limit \
         (`clientConnection.qps`/`burst`, default 50/100 as upstream), which every request of the scheduler passes."
    );
    let rate_of = |limited: bool| -> Vec<&e2e::E2eRun> {
        results
            .iter()
            .filter(|r| (r.client_rate != E2E_NO_LIMIT) == limited)
            .collect()
    };
    let (limited, unlimited) = (rate_of(true), rate_of(false));
    if let Some(first) = limited.first() {
        let rates: Vec<f64> = limited.iter().map(|r| r.per_s()).collect();
        let (lo, hi) = rates.iter().fold((f64::INFINITY, 0.0_f64), |(lo, hi), r| {
            (lo.min(*r), hi.max(*r))
        });
        let per_shoot = limited
            .iter()
            .map(|r| r.bind_requests_per_shoot())
            .fold(0.0_f64, f64::max);
        let _ = writeln!(
            body,
            "\nWith the default limit ({} qps, burst {}) the rows bind {}–{} shoots/s: a bind is one request on the main client \
             (the `binding` subresource, sent from the cached shoot), at most {:.2} requests per bound shoot with the watches \
             included, so the limit bounds binding near qps; the success event goes through the reporter's own client and \
             never waits in the binds' queue.",
            first.client_rate.0,
            first.client_rate.1,
            fmt_rate(lo),
            fmt_rate(hi),
            per_shoot,
        );
    }
    if !unlimited.is_empty() {
        let _ = writeln!(
            body,
            "Without a client-side limit in effect (`qps` and `burst` 100,000; `qps: 0` is defaulted to 50, as upstream does) the \
             same shoots bind at {}. A landscape that creates shoots in large bursts can raise `clientConnection.qps` and `burst` \
             within what its API server allows.",
            unlimited
                .iter()
                .map(|r| format!(
                    "{} shoots/s with `concurrentSyncs` {}",
                    fmt_rate(r.per_s()),
                    r.concurrent_syncs
                ))
                .collect::<Vec<_>>()
                .join(" and ")
        );
    }
    report.push_block("e2e", "End-to-end binding throughput", body);
}

/// Binds/s and bytes per bind with the decision record off and on, alternating, at the default
/// client limit and without one.
fn record_section(mode: &Mode, report: &mut Report) {
    const ROUNDS: usize = 2;
    let mut rows = vec![
        [
            "client qps / burst",
            "decisionRecord",
            "shoots bound/s, each run",
            "mean",
            "record bytes per bind",
        ]
        .map(String::from)
        .to_vec(),
    ];
    let mut means = Vec::new();
    for rate in [E2E_DEFAULT_RATE, E2E_NO_LIMIT] {
        let mut per_s: [Vec<f64>; 2] = [Vec::new(), Vec::new()];
        let mut bytes = [0.0; 2];
        for _ in 0..ROUNDS {
            for (i, (on, config)) in [(false, ""), (true, "decisionRecord: true\n")]
                .into_iter()
                .enumerate()
            {
                progress(&format!(
                    "record: {} shoots, client qps {}, decisionRecord {on}",
                    mode.e2e_shoots, rate.0
                ));
                let r = e2e::run_with(
                    5,
                    rate,
                    E2E_SEEDS,
                    E2E_SEED_CAPACITY,
                    mode.e2e_shoots,
                    E2E_IN_FLIGHT,
                    Duration::from_secs(600),
                    config,
                );
                assert_eq!(r.bound, mode.e2e_shoots, "every shoot bound");
                assert_eq!(r.record_bytes > 0.0, on, "a record exactly when it is on");
                per_s[i].push(r.per_s());
                bytes[i] = r.record_bytes;
            }
        }
        for (i, on) in [false, true].into_iter().enumerate() {
            let mean = per_s[i].iter().sum::<f64>() / per_s[i].len() as f64;
            means.push((rate, on, mean));
            rows.push(vec![
                if rate != E2E_NO_LIMIT {
                    format!("{} / {}", rate.0, rate.1)
                } else {
                    "no limit (100,000 / 100,000)".into()
                },
                if on { "true" } else { "false" }.into(),
                per_s[i]
                    .iter()
                    .map(|r| fmt_rate(*r))
                    .collect::<Vec<_>>()
                    .join(", "),
                fmt_rate(mean),
                if on {
                    format!("{:.0}", bytes[i])
                } else {
                    "0".into()
                },
            ]);
        }
    }
    let mut body = String::new();
    let _ = writeln!(
        body,
        "The setup of the section above (concurrentSyncs 5, {} shoots created at once, {E2E_SEEDS} seeds), run {ROUNDS} times \
         each with `schedulers.shoot.decisionRecord` off and on, alternating, one fresh API server per run. Record bytes: the \
         mean length of the annotation on the bound shoots, the bytes it adds to each binding request.\n",
        fmt_count(mode.e2e_shoots as u64)
    );
    body.push_str(&report::table(&rows));
    for pair in means.chunks(2) {
        if let [(rate, _, off), (_, _, on)] = pair {
            let _ = writeln!(
                body,
                "\nAt client qps {}: {} shoots/s with the record, {} without ({:+.1} %).",
                if *rate == E2E_NO_LIMIT {
                    "unlimited".to_string()
                } else {
                    rate.0.to_string()
                },
                fmt_rate(*on),
                fmt_rate(*off),
                (on / off - 1.0) * 100.0
            );
        }
    }
    report.push_block("record", "The decision record's cost to binds", body);
}

/// The median thread CPU time of `runs` calls of `f`.
fn median_cpu(runs: usize, mut f: impl FnMut()) -> Duration {
    let mut cpu: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = thread_cpu();
            f();
            thread_cpu() - t
        })
        .collect();
    cpu.sort();
    cpu[runs / 2]
}

/// Gardener's own `DetermineSeed`, reading through controller-runtime's informer cache as in
/// production (the reference program's timing mode), beside `decide()` with the
/// upstream-equivalent profile on the same landscape and the same pending shoots.
fn upstream_section(mode: &Mode, report: &mut Report) {
    let program = upstream::reference_program().unwrap_or_else(|e| panic!("{e}"));
    let profile = profiles::upstream("SameRegion");
    let now = now();
    let mut rows = vec![
        [
            "seeds",
            "existing shoots",
            "N",
            "placed",
            "upstream median CPU",
            "upstream p99 CPU",
            "upstream median wall",
            "ours median CPU",
            "ours p99 CPU",
            "ours median wall",
            "upstream / ours",
            "same seed or a tie",
            "cache fill (untimed)",
        ]
        .map(String::from)
        .to_vec(),
    ];
    let (mut backing_reads, mut informers) = (0, Vec::new());
    for &seeds in &mode.upstream_seeds {
        for &shoots in &mode.upstream_shoots {
            progress(&format!("upstream: {seeds} seeds × {shoots} shoots"));
            let spec = GridSpec {
                seeds,
                shoots,
                rng_seed: 42,
            };
            let grid = landscape::grid(spec, mode.pending);
            // our seed of every pending shoot, for upstream's check of ties
            let compare = grid
                .pending
                .iter()
                .map(|s| {
                    decide(s, &grid.snapshot, &profile.profile, now)
                        .map(|d| d.seed)
                        .unwrap_or_default()
                })
                .collect();
            let pending: Vec<_> = grid.pending.iter().map(memory::with_type_meta).collect();
            let objects = upstream::objects(spec);
            let time = upstream::Time {
                target_ms: mode.target_baseline.as_secs_f64() * 1e3,
                min: 3,
                max: mode.pending,
                compare,
            };
            let up = upstream::time_upstream(&program, "SameRegion", &objects, &pending, &time)
                .unwrap_or_else(|e| panic!("{seeds} seeds × {shoots} shoots: {e}"));
            drop(objects);
            if let Some(d) = up.decisions.iter().find(|d| d.panic.is_some()) {
                panic!("upstream panicked deciding {}: {:?}", d.shoot, d.panic);
            }
            let failed = up.decisions.iter().filter(|d| d.error.is_some()).count();
            let n = up.cpu_ns.len();
            // the same n shoots, repeated for at least 10,000 samples of ours
            let ours = upstream::time_ours(
                &grid.pending,
                n,
                10_000usize.div_ceil(n),
                &grid.snapshot,
                &profile.profile,
                now,
            );
            let agree = up
                .decisions
                .iter()
                .zip(&ours.seeds)
                .filter(|(u, o)| u.agrees(o.as_deref()))
                .count();
            let ns = |v: &[u64]| {
                v.iter()
                    .map(|n| Duration::from_nanos(*n))
                    .collect::<Vec<_>>()
            };
            let (up_cpu, up_wall) = (ns(&up.cpu_ns), ns(&up.wall_ns));
            let median = |v: &[Duration]| percentile(v, 50.0).unwrap_or_default();
            let p99 = |v: &[Duration]| percentile(v, 99.0).unwrap_or_default();
            progress(&format!(
                "  upstream median {} CPU ({n} decisions, {}), ours {}, agree {agree}/{n}",
                fmt_duration(median(&up_cpu)),
                up.reader,
                fmt_duration(median(&ours.cpu))
            ));
            rows.push(vec![
                fmt_count(seeds as u64),
                fmt_count(shoots as u64),
                fmt_count(n as u64),
                format!("{:.0} %", 100.0 * (n - failed) as f64 / n as f64),
                fmt_duration(median(&up_cpu)),
                fmt_duration(p99(&up_cpu)),
                fmt_duration(median(&up_wall)),
                fmt_duration(median(&ours.cpu)),
                fmt_duration(p99(&ours.cpu)),
                fmt_duration(median(&ours.wall)),
                format!(
                    "{}×",
                    fmt_count(
                        (median(&up_cpu).as_secs_f64() / median(&ours.cpu).as_secs_f64()).round()
                            as u64
                    )
                ),
                format!("{agree}/{n}"),
                fmt_duration(Duration::from_secs_f64(up.fill_ms / 1e3)),
            ]);
            backing_reads += up.backing_reads;
            informers = up.informers;
        }
    }
    let mut body = String::new();
    let _ = writeln!(
        body,
        "Upstream is Gardener v1.149.3's `(*shoot.Reconciler).DetermineSeed`, compiled unchanged from its Go module by \
         `tests/reference/` (timing mode, `timing.go`), strategy `SameRegion`. It reads through the client a \
         controller-runtime manager gives upstream's scheduler: `client.New` with controller-runtime's informer cache \
         (`sigs.k8s.io/controller-runtime/pkg/cache`) as its reader, with upstream's cache options and Project namespace \
         index. The informers ({}) list and watch an in-process fake client instead of an API server; {}.\n",
        informers
            .iter()
            .map(|i| format!("`{i}`"))
            .collect::<Vec<_>>()
            .join(", "),
        match backing_reads {
            0 => "no read made while deciding reached it: the cache served them all".to_string(),
            n => format!("{n} reads made while deciding reached it"),
        }
    );
    let _ = writeln!(
        body,
        "Ours is `decide()` with the upstream-equivalent profile ({}) on the same landscape: the grid generator of \
         section 1 (generator seed 42), its {} pending shoots. Neither side binds; decision *k* takes pending shoot \
         *k* mod {}. Each decision is timed alone as the process's CPU time (upstream: `getrusage`, every thread, so \
         the garbage collector's work counts; ours: `CLOCK_PROCESS_CPUTIME_ID`) and as wall time. Decoding and \
         filling the cache are not timed.\n",
        profile.describe(),
        fmt_count(mode.pending as u64),
        mode.pending,
    );
    let _ = writeln!(
        body,
        "Upstream times N decisions, N chosen from three untimed ones for about \
         {} s of CPU, at least 3 (the p99 of fewer than 100 decisions is their maximum); ours decides the same N \
         shoots, repeated for at least 10,000 samples. \
         \"placed\" is the share of the N decisions where upstream found a seed. \"upstream / ours\" divides the median CPU times. \"same seed or a tie\" counts decisions where our seed is \
         upstream's, or one upstream picks equally when it is listed first (upstream takes the first seed with the \
         fewest shoots in list order), or neither finds a seed.\n",
        mode.target_baseline.as_secs_f64()
    );
    body.push_str(&report::table(&rows));
    report.push_block(
        "upstream",
        "Upstream's own decision through its informer cache, beside ours",
        body,
    );
}

/// What the largest shoot the API server takes costs the process: 256 KiB of annotations, all
/// of them scheduling gates, parsed alone and applied to the cache as a watch delivers it.
fn inputs_section(report: &mut Report) {
    use gardener_scheduler::api::{ANNOTATION_GATES, Gates};
    use gardener_scheduler::controller::Cache;
    const RUNS: usize = 21;
    progress("inputs: the largest object");
    let mut gates = String::new();
    let mut i = 0;
    while gates.len() + 8 < 256 * 1024 {
        if i > 0 {
            gates.push(',');
        }
        let _ = write!(gates, "g{i}");
        i += 1;
    }
    let mut shoot: Shoot = serde_json::from_value(serde_json::json!({
        "metadata": {"name": "gated", "namespace": "garden-a", "resourceVersion": "1",
                     "annotations": {ANNOTATION_GATES: gates}},
        "spec": {"cloudProfileName": "aws", "region": "eu-west-1", "provider": {"type": "aws"}}
    }))
    .expect("shoot");
    let raw = serde_json::to_value(&shoot).expect("json");
    let parse = median_cpu(RUNS, || {
        black_box(Gates::parse(black_box(&gates)));
    });
    let mut cache = Cache::new(vec!["default-scheduler".into()]);
    let mut version = 1u64;
    let apply = median_cpu(RUNS, || {
        version += 1;
        shoot.metadata.resource_version = Some(version.to_string());
        black_box(cache.apply_raw_shoot(&shoot, &raw));
    });
    let rows = vec![
        ["step", "input", "median CPU (one thread)"]
            .map(String::from)
            .to_vec(),
        vec![
            "gates parsed (`Gates::parse`)".into(),
            format!(
                "{} gates, {}",
                fmt_count(i as u64),
                fmt_bytes(gates.len() as f64)
            ),
            fmt_duration(parse),
        ],
        vec![
            "a new version applied to the cache (JSON kept, gates parsed, change checked)".into(),
            format!(
                "the same shoot, {} of JSON",
                fmt_bytes(raw.to_string().len() as f64)
            ),
            fmt_duration(apply),
        ],
    ];
    let mut rows = rows;
    rows.extend(largest_rows(RUNS));
    let mut body = String::new();
    let _ = writeln!(
        body,
        "A pending shoot with 256 KiB of annotations, the most the API server takes, all of them \
         scheduling gates. Each step run {RUNS} times; the median thread CPU time. The watch does \
         this work before it takes the cache's lock; under the lock it only stores the result.\n"
    );
    let _ = writeln!(
        body,
        "The rows below take the largest object of each kind through the parsers the process runs \
         on it (`tests/support/largest.rs` builds them; `tests/largest_object.rs` checks that \
         twice the object costs about twice the work): 256 KiB of annotations over many keys, \
         38,000 gates among them, 1,000 labels at their length limits, the rest of the 1.5 MiB in \
         worker pools, taints or machine types. Every kind is made ready (compacted, parsed, \
         compiled) before the watch takes the cache's lock and only stored under it; the last \
         rows time that stored part alone.\n"
    );
    body.push_str(&report::table(&rows));
    report.push_block("inputs", "The largest object", body);
}

/// The largest object of each kind, from the text a watch delivers to the cache: one row each.
fn largest_rows(runs: usize) -> Vec<Vec<String>> {
    use gardener_scheduler::api::{CloudProfile, ConfigMap, Seed};
    use gardener_scheduler::controller::{
        Cache, OtherUpdate, Sent, ShootUpdate, WatchedShoot, decode,
    };
    use kube::api::DynamicObject;
    let names = || vec!["default-scheduler".to_string()];
    let size = |text: &str| fmt_bytes(text.len() as f64);
    let shoot = largest::shoot_json(2, &[]);
    let mut rows = Vec::new();
    let mut cache = Cache::new(names());
    let mut version = 1u64;
    let cpu = median_cpu(runs, || {
        version += 1;
        let text = shoot.replacen(
            "\"resourceVersion\":\"100\"",
            &format!("\"resourceVersion\":\"{version}\""),
            1,
        );
        let watched = WatchedShoot::from_raw(black_box(&text));
        let typed: Shoot = serde_json::from_str(&text).expect("shoot");
        let update = ShootUpdate::new(&typed, Some(Sent::Text(&text)), &names());
        black_box((watched, cache.apply_shoot_update(update)));
    });
    rows.push(vec![
        "the largest shoot decoded from a watch and applied to the cache (JSON kept, gates parsed, change checked)".into(),
        format!("{}, 38,000 gates", size(&shoot)),
        fmt_duration(cpu),
    ]);
    fn kind<K: serde::de::DeserializeOwned>(
        runs: usize,
        text: &str,
        mut apply: impl FnMut(&mut Cache, &K),
    ) -> Duration {
        let mut cache = Cache::new(vec!["default-scheduler".to_string()]);
        median_cpu(runs, || {
            let object: DynamicObject = serde_json::from_str(black_box(text)).expect("object");
            let typed: K = decode(object).expect("decodes");
            apply(&mut cache, &typed);
        })
    }
    let seed = largest::seed_json(2);
    rows.push(vec![
        "the largest seed decoded and applied to the cache".into(),
        format!(
            "{}, 13,000 taints, 8,000 allocatable resources",
            size(&seed)
        ),
        fmt_duration(kind::<Seed>(runs, &seed, |c, s| {
            black_box(c.apply_seed(s));
        })),
    ]);
    let profile = largest::cloud_profile_json(2);
    rows.push(vec![
        "the largest cloud profile decoded and applied to the cache".into(),
        format!("{}, 6,800 machine types, 2,000 regions", size(&profile)),
        fmt_duration(kind::<CloudProfile>(runs, &profile, |c, p| {
            black_box(c.apply_cloud_profile(p));
        })),
    ]);
    let regions = serde_json::to_string(&largest::region_config_map(2)).expect("json");
    rows.push(vec![
        "the largest region ConfigMap decoded and applied to the cache (rows parsed, latency table built)".into(),
        format!("{}, 1,000 rows, 100,000 regions", size(&regions)),
        fmt_duration(kind::<ConfigMap>(runs, &regions, |c, cm| {
            black_box(c.apply_config_map(cm));
        })),
    ]);
    let carbon = serde_json::to_string(&largest::carbon_config_map(2)).expect("json");
    rows.push(vec![
        "the largest carbon-intensity ConfigMap decoded and applied to the cache (forecast parsed)"
            .into(),
        format!("{}, 5,500 points, 50 locations", size(&carbon)),
        fmt_duration(kind::<ConfigMap>(runs, &carbon, |c, cm| {
            black_box(c.apply_carbon_config_map(cm));
        })),
    ]);
    // What the decisions wait for: the part of each row above done under the cache's lock.
    type Make<'a> = &'a dyn Fn(&Cache, &str) -> OtherUpdate;
    let under_lock = |text: &str, make: Make| {
        let mut cache = Cache::new(names());
        let mut cpu: Vec<Duration> = (0..runs)
            .map(|_| {
                // The watch holds the version it read before until the lock is released, so
                // the old version is freed outside it.
                let before = cache.region_config("garden/regions");
                let update = make(&cache, text);
                let t = thread_cpu();
                black_box(cache.apply_other(update));
                let cpu = thread_cpu() - t;
                drop(before);
                cpu
            })
            .collect();
        cpu.sort();
        cpu[runs / 2]
    };
    let lock_rows: [(&str, &str, Make); 3] = [
        ("cloud profile", &profile, &|_, t| {
            OtherUpdate::cloud_profile(&serde_json::from_str(t).expect("profile"))
        }),
        ("region ConfigMap", &regions, &|c, t| {
            let cm: ConfigMap = serde_json::from_str(t).expect("ConfigMap");
            let previous = c.region_config("garden/regions");
            OtherUpdate::region_config_map(&cm, previous.as_deref())
        }),
        ("carbon-intensity ConfigMap", &carbon, &|_, t| {
            OtherUpdate::carbon_config_map(&serde_json::from_str(t).expect("ConfigMap"))
        }),
    ];
    for (what, text, make) in lock_rows {
        rows.push(vec![
            format!("of the largest {what}, the part under the cache's lock (stored)"),
            size(text),
            fmt_duration(under_lock(text, make)),
        ]);
    }
    rows
}

fn carbon_section(report: &mut Report) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let inputs = carbon::inputs(root);
    let mut rows = vec![
        [
            "CarbonIntensity weight",
            "placed / pending",
            "without forecast (not in mean)",
            "mean gCO2eq/kWh",
            "mean latency",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for weight in [0, 1, 3, 10] {
        progress(&format!("carbon: weight {weight}"));
        let r = carbon::run(&inputs, weight);
        rows.push(vec![
            if r.weight == 0 {
                "0 (not in the profile)".into()
            } else {
                r.weight.to_string()
            },
            format!("{} / {}", r.placed, r.pending),
            r.neutral.to_string(),
            format!("{:.1}", r.mean_intensity),
            format!("{:.1} ms", r.mean_latency_ms),
        ]);
    }
    let mut body = String::new();
    let _ = writeln!(
        body,
        "`simulate` on the example landscape (example/landscape/: {} seeds, {} shoots) with `Scored`, `LatencyDistance` weight 3 \
         (`matrixFile: example/latency-matrix.yaml`) and `CarbonIntensity` at the weight in the first column, with the arguments of \
         example/22-componentconfig-carbon.yaml (its `regionLocations`, 24 h horizon, `pointsFile: example/carbon-forecast.json`). \
         Weights must be positive, so weight 0 is the profile without `CarbonIntensity`. `--now` is {}, the first point of the forecast \
         (which runs to {}). Intensity is the expected gCO2eq/kWh of the chosen seed's location over the horizon (the priority's raw \
         value; for weight 0 read from the same settings); seeds without a usable forecast score neutral and are left out of that mean. \
         Latency is the round trip from the shoot's region to the seed's region (`LatencyDistance`'s raw value), over all placements.\n",
        inputs.landscape.seeds.len(),
        inputs.landscape.shoots.len(),
        inputs.now.to_rfc3339(),
        inputs.range.1.to_rfc3339(),
    );
    body.push_str(&report::table(&rows));
    report.push_block("carbon", "Carbon", body);
}

fn command_output(cmd: &str, args: &[&str]) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// `took` as a multiple of the server's floor, `-` where no floor was measured.
fn floor_ratio(took: Duration, floor: Duration) -> String {
    if floor.is_zero() {
        "-".to_string()
    } else {
        format!("{:.2}", took.as_secs_f64() / floor.as_secs_f64())
    }
}

/// The process at landscape scale: one row per number of shoots; a row that fails (the machine
/// short of memory) is reported as such and the next one still runs.
fn scale_section(mode: &Mode, report: &mut Report) {
    // first, while the machine is quiet: the landscape runs leave the server busy for a while
    let (size, now, before) = e2e::scale::decode_cost(500, if mode.quick { 4 } else { 20 });
    let mut rows = Vec::new();
    let mut failed = Vec::new();
    let rows_to_run = mode.scale_shoots.iter().flat_map(|&shoots| {
        mode.scale_watch_cache
            .iter()
            .map(move |&watch_cache| (shoots, watch_cache))
    });
    for (shoots, watch_cache) in rows_to_run {
        let server = server_label(watch_cache);
        progress(&format!("scale: 1,000 seeds, {shoots} shoots, {server}"));
        let spec = e2e::scale::ScaleSpec {
            seeds: 1_000,
            shoots,
            burst: mode.scale_burst,
            watch_cache,
            pages: mode.scale_pages.clone(),
            no_limit: mode.scale_no_limit,
            drip: mode.scale_drip,
            modes: mode.scale_modes.clone(),
            failover: mode.scale_failover,
        };
        match std::panic::catch_unwind(|| e2e::scale::run(&spec)) {
            Ok(row) => rows.push(row),
            Err(e) => {
                let why = e
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default();
                failed.push(format!(
                    "- {} shoots, {server}: not measured: {why}",
                    fmt_count(shoots as u64)
                ));
            }
        }
    }
    let kib = |k: u64| fmt_bytes(k as f64 * 1024.0);
    let mut body = String::new();
    let _ = writeln!(
        body,
        "Decoding 500 realistic shoots ({} of JSON each), CPU time per shoot in one thread: {} \
         as the shoot feed decodes a streamed list now (each event's line typed in one pass, \
         managedFields skipped), {} as it decoded a list page before (untyped object, then a JSON \
         tree, then typed from that).\n",
        fmt_bytes(size as f64),
        fmt_duration(now),
        fmt_duration(before)
    );
    let _ = writeln!(
        body,
        "The release binary against the test API server (its watch cache on, as in production, or \
         off, so that etcd serves every list and a compaction of etcd forces a 410) with 1,000 seeds and N bound shoots shaped like real ones (upstream's example \
         manifest, status with conditions and lastOperation, managedFields of four managers), written \
         into etcd directly. `MALLOC_ARENA_MAX=1` as in the image. The server and etcd share the \
         machine's cores with the scheduler; wall times move with the load, CPU times and memory much \
         less.\n"
    );
    let mut start = vec![
        [
            "shoots",
            "API server",
            "mode",
            "page",
            "floor: paged list (requests)",
            "floor: stream (its CPU per shoot)",
            "start → synced / first bind",
            "÷ stream floor",
            "÷ paged floor",
            "CPU to synced (per listed shoot)",
            "API server + etcd CPU to synced",
            "peak RSS",
            "steady RSS",
            "GET requests",
            "answer bytes: pages / stream",
            "load avg",
        ]
        .map(String::from)
        .to_vec(),
    ];
    let mut burst = vec![
        [
            "shoots",
            "API server",
            "mode",
            "list page size",
            "new shoots bound",
            "creates took",
            "first create → last bind",
            "create → bound p50",
            "create → bound p99",
            "RSS after the burst",
            "load avg",
        ]
        .map(String::from)
        .to_vec(),
    ];
    let mut relist = vec![
        [
            "shoots",
            "mode",
            "compaction → relist began",
            "relist took",
            "÷ stream floor (the start's)",
            "list requests (GET)",
            "CPU",
            "RSS when it began → peak during it / the initial list's peak",
            "shoots created during it: bound / created, slowest create → bound",
            "placements counted after it / expected",
            "bound twice",
            "left unbound",
            "binds made / needed",
            "API server / etcd peak RSS",
            "load avg",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for row in &rows {
        for r in &row.runs {
            let limit = r
                .label
                .split("-page-")
                .next()
                .unwrap_or_default()
                .to_string();
            let page = r
                .page
                .map_or_else(|| "default".to_string(), |p| fmt_count(p as u64));
            let ratio = |floor: Duration| floor_ratio(r.to_first_bind, floor);
            start.push(vec![
                fmt_count(row.shoots as u64),
                server_label(row.watch_cache).to_string(),
                format!("{} ({limit})", r.mode),
                page.clone(),
                format!(
                    "{} ({})",
                    fmt_duration(r.floor.paged),
                    r.floor.paged_requests
                ),
                format!(
                    "{} ({})",
                    fmt_duration(r.floor.streaming),
                    fmt_duration(r.floor.streaming_cpu / row.shoots.max(1) as u32)
                ),
                format!(
                    "{} / {}",
                    fmt_duration(r.to_synced),
                    fmt_duration(r.to_first_bind)
                ),
                ratio(r.floor.streaming),
                ratio(r.floor.paged),
                format!(
                    "{} ({})",
                    fmt_duration(r.at_synced.cpu),
                    fmt_duration(r.at_synced.cpu / row.shoots.max(1) as u32)
                ),
                fmt_duration(r.server_cpu),
                kib(r.at_synced.hwm_kib),
                format!(
                    "{} ({} heap and stacks, {} mapped files)",
                    kib(r.steady.rss_kib),
                    kib(r.steady.anon_kib),
                    kib(r.steady.file_kib)
                ),
                format!("{:.0}", r.list_requests),
                format!(
                    "{} / {}",
                    fmt_bytes(r.floor.paged_bytes as f64),
                    fmt_bytes(r.floor.streaming_bytes as f64)
                ),
                r.load.clone(),
            ]);
            let mut lat = r.burst.clone();
            lat.sort();
            let p = |q| {
                percentile(&lat, q)
                    .map(fmt_duration)
                    .unwrap_or_else(|| "-".into())
            };
            burst.push(vec![
                fmt_count(row.shoots as u64),
                server_label(row.watch_cache).to_string(),
                format!("{} ({limit})", r.mode),
                page,
                format!("{} / {}", r.burst_bound, mode.scale_burst),
                fmt_duration(r.creates_took),
                fmt_duration(r.burst_span),
                p(0.5),
                p(0.99),
                format!(
                    "{} ({} heap and stacks, {} threads)",
                    kib(r.after_burst.rss_kib),
                    kib(r.after_burst.anon_kib),
                    r.after_burst.threads
                ),
                r.load.clone(),
            ]);
        }
        if let Some(rl) = &row.relist {
            let slowest = rl
                .drip
                .iter()
                .max()
                .copied()
                .map(fmt_duration)
                .unwrap_or_else(|| "-".into());
            relist.push(vec![
                fmt_count(row.shoots as u64),
                row.relist_mode.clone(),
                fmt_duration(rl.waited),
                fmt_duration(rl.took),
                row.runs.first().map_or_else(
                    || "-".to_string(),
                    |r| floor_ratio(rl.took, r.floor.streaming),
                ),
                format!("{:.0}", rl.requests),
                fmt_duration(rl.cpu),
                format!(
                    "{} → {} / {}",
                    kib(rl.began_kib),
                    kib(rl.peak_kib),
                    kib(row.relist_initial_peak_kib)
                ),
                format!("{} / {}, {slowest}", rl.drip.len(), rl.drip_created),
                format!("{:.0} / {}", row.counted.0, row.counted.1),
                row.bound_twice.to_string(),
                row.unbound.to_string(),
                format!("{:.0} / {}", row.binds.0, row.binds.1),
                format!("{} / {}", kib(row.apiserver_kib), kib(row.etcd_kib)),
                rl.load.clone(),
            ]);
        }
    }
    let mut failover = vec![
        [
            "shoots",
            "API server",
            "leaseDuration",
            "kill → standby's first bind",
            "goal (leaseDuration + 2 s)",
            "lists by the standby after the kill",
            "its GET requests (watches, reads)",
            "load avg",
        ]
        .map(String::from)
        .to_vec(),
    ];
    for row in &rows {
        if let Some(f) = &row.failover {
            failover.push(vec![
                fmt_count(row.shoots as u64),
                server_label(row.watch_cache).to_string(),
                fmt_duration(f.lease_duration),
                fmt_duration(f.to_bind),
                if f.to_bind <= f.lease_duration + Duration::from_secs(2) {
                    "met".to_string()
                } else {
                    "missed".to_string()
                },
                format!("{:.0}", f.standby_lists),
                format!("{:.0}", f.standby_gets),
                f.load.clone(),
            ]);
        }
    }
    let _ = writeln!(
        body,
        "Start and initial list. Floor: the same server hands the same shoots to a bare client in the same run, just before the scheduler starts (a paged list at the run's page size; a streaming watch to its end marker, with the client's own CPU per shoot); the ratios divide the time to the first bind by it. Mode: how the shoot feed listed (from `lists_total`), and the client limit. CPU: user + system from /proc; peak RSS: VmHWM at synced caches; steady: VmRSS 5 s after the first bind; answer bytes: the bodies of the floor's pages and stream (JSON, before TLS), what the scheduler is sent for its list:\n\n{}",
        report::table(&start)
    );
    let _ = writeln!(
        body,
        "A burst of {} new pending shoots created at once (64 requests in flight):\n\n{}",
        fmt_count(mode.scale_burst as u64),
        report::table(&burst)
    );
    let _ = writeln!(
        body,
        "A relist forced by a 410 on the shoot watch (watch cache off, etcd compacted; the watch's \
         next restart gets 410 Gone), at the default client limit and the first page size; a new shoot created every 100 ms while it runs. \
         ÷ stream floor: the time the relist took over the floor's stream before the start, the same \
         server and shoots. Peak RSS: VmHWM reset at the compaction:\n\n{}",
        report::table(&relist)
    );
    for row in &rows {
        let _ = writeln!(
            body,
            "- {} shoots, {}: {} of JSON per shoot on average, landscape built in {} (with the watch cache filled, where on).",
            fmt_count(row.shoots as u64),
            server_label(row.watch_cache),
            fmt_bytes(row.avg_json_bytes as f64),
            fmt_duration(row.build)
        );
    }
    let _ = writeln!(body);
    if failover.len() > 1 {
        let _ = writeln!(
            body,
            "The leader killed (SIGKILL) with a standby ready (both with warm caches, upstream's lease timings 15 s / 10 s / 2 s), a shoot created right after the kill:\n\n{}",
            report::table(&failover)
        );
    }
    for f in failed {
        let _ = writeln!(body, "{f}");
    }
    report.push_block("scale", "Process at landscape scale", body);
}

fn server_label(watch_cache: bool) -> &'static str {
    if watch_cache {
        "watch cache on"
    } else {
        "watch cache off"
    }
}

fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .ok()
        .map(|l| l.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_else(|| "unknown".into())
}

fn machine() -> String {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find(|l| l.starts_with("model name"))
        .and_then(|l| l.split(':').nth(1))
        .map(str::trim)
        .unwrap_or("unknown")
        .to_string();
    let mem = std::fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find(|l| l.starts_with("MemTotal"))
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|kb| kb.parse::<f64>().ok())
        .map(|kb| fmt_bytes(kb * 1024.0))
        .unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(0);
    format!("{cores} cores ({model}), {mem} memory")
}

fn main() {
    if std::env::var_os(memory::MEASURE_ENV).is_some() {
        memory::measure_child_main();
        return;
    }
    // `cargo bench` passes `--bench`; `cargo test --all-targets` runs this binary without it, and
    // tests/bench_smoke.rs already covers this code there.
    if !std::env::args().any(|a| a == "--bench") {
        println!(
            "scheduler bench: run it with `make bench` (cargo bench --bench scheduler); skipped under cargo test"
        );
        return;
    }
    let mode = Mode::from_env().with_axes_from_env();
    let target = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target");
    std::fs::create_dir_all(&target).expect("target dir");
    let started = Instant::now();
    let load_before = loadavg();
    let mut report = Report::default();
    let simulated = mode.runs("memory").then(|| simulate_run(&mode, &target));
    let large = mode
        .runs("memory")
        .then(|| simulate_large_run(&mode, &target));
    if mode.runs("latency") {
        latency_sections(&mode, &mut report);
    }
    if let (Some(run), Some(large)) = (&simulated, &large) {
        memory_section(&mode, run, large, &mut report);
    }
    let mut chart = None;
    if mode.runs("quality") {
        chart = quality_section(&mode, &target, &mut report);
    }
    if mode.runs("carbon") {
        carbon_section(&mut report);
    }
    // Child processes only after the simulate RSS measurement.
    if mode.runs("e2e") {
        e2e_section(&mode, &mut report);
    }
    if mode.runs("record") {
        record_section(&mode, &mut report);
    }
    if mode.runs("scale") {
        scale_section(&mode, &mut report);
    }
    if mode.runs("inputs") {
        inputs_section(&mut report);
    }
    if mode.runs("upstream") {
        upstream_section(&mode, &mut report);
    }
    let commit = command_output("git", &["rev-parse", "--short", "HEAD"]);
    let rustc = command_output("rustc", &["--version"]);
    report.header = format!(
        "# Scheduler benchmarks\n\n\
         - machine: {}; shared with other work: load average {load_before} at the start, {} at the end (1/5/15 min)\n\
         - build: {rustc}, `bench` profile (release), commit `{commit}`\n\
         - run: {} mode, sections {}, took {}; timings move with the load of the shared machine, so compare cells within one run\n\
         - reproduce: `make bench` (= `cargo bench --bench scheduler`); `BENCH_QUICK=1 make bench` for a small run in minutes. \
         The report is written to `target/bench-report.md` and the chart to `target/performance-quality.svg`; \
         a run that is not quick also rewrites the generated blocks of its sections in `docs/performance.md` \
         (and `docs/performance-quality.svg`), leaving the rest of the page as it is (`BENCH_DOC=0`: leave the page alone).\n",
        machine(),
        loadavg(),
        if mode.quick {
            "quick (BENCH_QUICK=1)"
        } else {
            "full"
        },
        mode.sections.join(", "),
        fmt_duration(started.elapsed()),
    );
    let text = report.render();
    let path = target.join("bench-report.md");
    std::fs::write(&path, &text).expect("write report");
    println!("{text}");
    progress(&format!("report: {}", path.display()));
    if let Some(c) = &chart {
        progress(&format!("chart: {c}"));
    }
    if mode.quick || std::env::var("BENCH_DOC").is_ok_and(|v| v == "0") {
        progress("docs/performance.md left as it is (BENCH_QUICK=1 or BENCH_DOC=0)");
        return;
    }
    if let Err(e) = write_doc(&mode, &report, &commit, &load_before, chart.as_deref()) {
        eprintln!("docs/performance.md: {e}");
        std::process::exit(1);
    }
}

/// Rewrites the generated blocks of `docs/performance.md` that this run measured: with the run's
/// header when it ran every section at the documented sizes, each opened by how it was run
/// otherwise.
fn write_doc(
    mode: &Mode,
    report: &Report,
    commit: &str,
    load_before: &str,
    chart: Option<&str>,
) -> Result<(), String> {
    let docs = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("docs");
    let mut settings: Vec<String> = std::env::vars()
        .filter(|(k, _)| k.starts_with("BENCH_") && k != "BENCH_DOC")
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    settings.sort();
    let full = settings.is_empty() && ALL_SECTIONS.iter().all(|s| mode.runs(s));
    let header = report
        .header
        .split_once('\n')
        .map_or("", |(_, rest)| rest.trim());
    let provenance = format!(
        "Measured apart from the run above, with `{} make bench` at commit `{commit}` (load average {load_before} at the start).",
        settings.join(" ")
    );
    report.write_blocks(
        &docs.join("performance.md"),
        full.then_some(header),
        (!full).then_some(provenance.as_str()),
    )?;
    if let Some(chart) = chart {
        std::fs::copy(chart, docs.join("performance-quality.svg")).map_err(|e| e.to_string())?;
    }
    progress("docs/performance.md: the blocks of this run's sections rewritten");
    Ok(())
}

//! gardener-scheduler places Gardener Shoot control planes onto Seed clusters.
//!
//! ```text
//! watch ─► cache ─► queue ─► filter ─► score ─► pick ─► bind ─► events
//!  (kube)  (pure)   (kube)   (pure)    (pure)   (pure)  (kube)  (kube)
//! ```
//!
//! The decision is one pure pipeline, `(&Shoot, &Snapshot, &Profile, now)` in, a decision or a
//! fit error out, run in one of two modes over the same stages in the same order: fast
//! ([`schedule::decide_within`], verdicts and totals, what the controller runs) and explain
//! ([`schedule::schedule`], every rejection and score detail, what `simulate`, `plan` and
//! `--explain` run). The controller and the offline commands feed a [`snapshot::Snapshot`] and
//! call it; so do the tests and the benches.
//!
//! The modules below are grouped by layer, the lowest first, so that reading down follows the
//! data: each group imports only from the groups above it (`tests/module_graph.rs` checks it;
//! docs/development/architecture.md draws it). Within a group they are in rustfmt's
//! alphabetical order.
#![forbid(unsafe_code)]

// Leaf vocabulary and helpers: they import nothing above them.
/// Leaf helper: a leading UTF-8 byte order mark in user files.
pub mod bom;
/// Leaf helper: CIDR overlap and the ranges Gardener reserves.
pub mod cidr;
/// Leaf helper: control, line-break, bidi and zero-width characters made visible in output.
pub mod escape;
/// Leaf vocabulary: one problem with one field, named by its path.
pub mod field_error;
/// Leaf helper: durations in Go's syntax (`1h30m`, `300ms`), as upstream's files write them.
pub mod go_duration;
/// Reading input files: regular files only, bounded size, nesting checked before parsing.
pub mod input;
/// Leaf helper: the Kubernetes rules for names, label keys and values.
pub mod names;
/// Leaf helper: Kubernetes resource quantities, read as apimachinery reads them (`Value()`).
pub mod quantity;
/// Leaf helper: the distance between two region names when no catalogue entry knows them.
pub mod region_distance;

// What the decision reads: the objects, the configuration file, the region catalogue, forecasts.
/// Serde types of the Gardener objects read (Shoot, Seed, CloudProfile, Project, ConfigMap).
pub mod api;
/// The `SchedulerConfiguration` file: upstream keys and defaults plus our extensions.
pub mod config;
/// Carbon-intensity forecasts: parsing, staleness, expected intensity per location (a leaf).
pub mod forecast;
/// The region catalogue: where each provider's regions are and under which jurisdiction.
pub mod regions;

// The decision's vocabulary: a seed's rejection, a shoot's fit error, a decision's budget.
/// How long one decision may take (leaf).
pub mod budget;
/// Leaf vocabulary: a seed's rejection and a shoot's fit error.
pub mod outcome;
/// Why seeds were rejected, aggregated into one actionable line.
pub mod reason;

// The landscape as the decision sees it.
/// The landscape as the decision sees it: compact seeds, profiles and a usage index.
pub mod snapshot;

// Per-shoot state, the plugins' shared vocabulary, the carbon assessment.
/// Carbon-aware placement: what a seed's forecast means for a shoot, and the carbon report.
pub mod carbon;
/// Per-shoot state computed once per decision (parsed selectors, CIDRs, zones, project).
pub mod context;
/// Leaf vocabulary of plugins: typed arguments, shared checks, declared cluster data.
pub mod plugin;

// The plugins: filters, region strategies, priorities.
/// Filters: one predicate per file, in upstream order.
pub mod predicates;
/// Scores: one priority per file, raw value -> 0..=100 -> × weight.
pub mod priorities;
/// Region strategies: SameRegion, MinimalDistance, RegionPrefix, Scored.
pub mod strategies;

// A profile: its stages and weighted priorities.
/// A compiled profile: stages plus weighted priorities.
pub mod profile;

// The decision.
/// The pure decision and its outcome types.
pub mod schedule;

// The profile chain and the configuration compiled into it.
/// The profile chain: time-windowed profiles and freezes; the first active entry applies.
pub mod chain;
/// The configuration compiled once: validated and turned into the profile chain in one pass.
pub mod compile;

// The edges: the scheduler process and the offline tools.
/// Carrying out a saved plan: which move starts when (pure), checks, bindings, following.
pub mod apply;
/// The scheduler process: watches, queue, bind, events, leader election, metrics, health.
pub mod controller;
/// CustomResourceDefinitions for development clusters without gardener-apiserver.
pub mod crds;
/// Seed evacuation: seed health with hysteresis (pure), and the plans the leader publishes.
pub mod evacuation;
/// `gardener-scheduler explain`: one shoot's decision as recorded and as it would be made now.
pub mod explain;
/// Drain and rebalance plans: where shoots should move, and when.
pub mod plan;
/// The HTML reports of `plan`, `simulate` and `explain`, and of the evacuation plans published.
pub mod report;
/// Manifest files -> objects, for `simulate` (the offline edge).
pub mod simulate;

// For tests and benchmarks.
/// Builders for tests and benchmarks (the `test-util` feature; not in release builds).
#[cfg(any(test, feature = "test-util"))]
pub mod fixtures;

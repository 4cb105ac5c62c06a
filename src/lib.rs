//! gardener-scheduler places Gardener Shoot control planes onto Seed clusters.
//!
//! ```text
//! watch ─► cache ─► queue ─► filter ─► score ─► pick ─► bind ─► report
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
//! Modules in data-flow order:
#![forbid(unsafe_code)]

/// Serde types of the Gardener objects read (Shoot, Seed, CloudProfile, Project, ConfigMap).
pub mod api;
/// Leaf helper: a leading UTF-8 byte order mark in user files.
pub mod bom;
/// How long one decision may take (leaf).
pub mod budget;
/// Carbon-aware placement: what a seed's forecast means for a shoot, and the carbon report.
pub mod carbon;
/// The profile chain: time-windowed profiles and freezes; the first active entry applies.
pub mod chain;
/// Leaf helper: CIDR overlap and the ranges Gardener reserves.
pub mod cidr;
/// The configuration compiled once: validated and turned into the profile chain in one pass.
pub mod compile;
/// The `SchedulerConfiguration` file: upstream keys and defaults plus our extensions.
pub mod config;
/// Per-shoot state computed once per decision (parsed selectors, CIDRs, zones, project).
pub mod context;
/// The scheduler process: watches, queue, bind, events, leader election, metrics, health.
pub mod controller;
/// CustomResourceDefinitions for development clusters without gardener-apiserver.
pub mod crds;
/// Leaf helper: control, line-break, bidi and zero-width characters made visible in output.
pub mod escape;
/// Leaf vocabulary: one problem with one field, named by its path.
pub mod field_error;
/// Builders for tests and benchmarks (the `test-util` feature; not in release builds).
#[cfg(any(test, feature = "test-util"))]
pub mod fixtures;
/// Carbon-intensity forecasts: parsing, staleness, expected intensity per location (a leaf).
pub mod forecast;
/// Leaf helper: durations in Go's syntax (`1h30m`, `300ms`), as upstream's files write them.
pub mod go_duration;
/// Reading input files: regular files only, bounded size, nesting checked before parsing.
pub mod input;
/// Leaf helper: the Kubernetes rules for names, label keys and values.
pub mod names;
/// Leaf vocabulary: a seed's rejection and a shoot's fit error.
pub mod outcome;
/// Drain and rebalance plans: where shoots should move, and when.
pub mod plan;
/// Leaf vocabulary of plugins: typed arguments, shared checks, declared cluster data.
pub mod plugin;
/// Filters: one predicate per file, in upstream order.
pub mod predicates;
/// Scores: one priority per file, raw value -> 0..=100 -> × weight.
pub mod priorities;
/// A compiled profile: stages plus weighted priorities.
pub mod profile;
/// Kubernetes resource quantities.
pub mod quantity;
/// Why seeds were rejected, aggregated into one actionable line.
pub mod reason;
/// Leaf helper: the distance between two region names when no catalogue entry knows them.
pub mod region_distance;
/// The region catalogue: where each provider's regions are and under which jurisdiction.
pub mod regions;
/// The pure decision and its outcome types.
pub mod schedule;
/// Manifest files -> objects, for `simulate` (the offline edge).
pub mod simulate;
/// The landscape as the decision sees it: compact seeds, profiles and a usage index.
pub mod snapshot;
/// Region strategies: SameRegion, MinimalDistance, RegionPrefix, Scored.
pub mod strategies;

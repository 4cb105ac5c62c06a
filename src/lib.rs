//! gardener-scheduler places Gardener Shoot control planes onto Seed clusters.
//!
//! ```text
//! watch ─► cache ─► queue ─► filter ─► score ─► pick ─► bind ─► report
//!  (kube)  (pure)   (kube)   (pure)    (pure)   (pure)  (kube)  (kube)
//! ```
//!
//! The decision is one pure function, [`schedule::schedule`]`(&Shoot, &Snapshot, &Profile, now)`.
//! The controller (watches, binding, events) and the offline `simulate` command both feed a
//! [`snapshot::Snapshot`] and call it; so do the tests.
//!
//! Modules in data-flow order:
#![forbid(unsafe_code)]

/// Serde types of the Gardener objects read (Shoot, Seed, CloudProfile, Project, ConfigMap).
pub mod api;
/// Leaf helper: a leading UTF-8 byte order mark in user files.
pub mod bom;
/// Carbon-intensity forecasts: parsing, staleness, expected intensity per location.
pub mod carbon;
/// The profile chain: time-windowed profiles and freezes; the first active entry applies.
pub mod chain;
/// The `SchedulerConfiguration` file: upstream keys and defaults plus our extensions.
pub mod config;
/// Per-shoot state computed once per decision (parsed selectors, CIDRs, zones, project).
pub mod context;
/// The scheduler process: watches, queue, bind, events, leader election, metrics, health.
pub mod controller;
/// CustomResourceDefinitions for development clusters without gardener-apiserver.
pub mod crds;
/// Builders for tests and benchmarks (the `test-util` feature; not in release builds).
#[cfg(any(test, feature = "test-util"))]
pub mod fixtures;
/// Leaf helper: durations in Go's syntax (`1h30m`, `300ms`), as upstream's files write them.
pub mod go_duration;
/// Reading input files: regular files only, bounded size, nesting checked before parsing.
pub mod input;
/// Drain and rebalance plans: where shoots should move, and when.
pub mod plan;
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

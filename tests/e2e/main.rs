//! End-to-end tests against Gardener's own API (gardener-apiserver behind a kube-apiserver with
//! RBAC, tests/garden/), each with its own servers; a few, named in their docs, against a cluster
//! serving Gardener's kinds as CRDs (tests/apiserver/). They run the scheduler binary (or, for the
//! conflict steps, the controller in-process) with the chart's identity and assert only through
//! the API, as a user would see it.

#[path = "../support/mod.rs"]
mod support;

#[path = "../support/monitoring.rs"]
mod monitoring_files;

mod apply;
mod binds;
mod burst;
mod carbon;
mod conflict;
mod endless;
mod evacuation;
mod evacuation_automatic;
mod explain;
mod faults;
mod gates;
mod gates_measure;
mod leader;
mod least_privilege;
mod listing;
mod metrics;
mod plan;
mod profiles;
mod prometheus;
mod record;
mod refusals;
mod restart;
mod scheduling;
mod security;
mod token;
mod upstream_config;
mod upstream_integration;
mod whatif;

//! What every priority is, and nothing about which priorities exist (the registry is `mod.rs`):
//! the [`Priority`] trait, its [`RawScore`] and the shared normalisation. Plugin files import this
//! module, never the registry, so the folder has no cycle.

pub use super::detail::Detail;
use crate::context::ShootContext;
use crate::plugin::ClusterData;
use crate::snapshot::{SeedInfo, Snapshot};

/// The best normalised score.
pub const MAX_SCORE: f64 = 100.0;

/// A raw value and what it means, for explanations (`12 shoots`, `38 ms (measured)`).
#[derive(Clone, Debug, PartialEq)]
pub struct RawScore {
    pub value: f64,
    pub detail: Detail,
}

pub trait Priority: Send + Sync {
    fn name(&self) -> &'static str;
    /// Raw values for all candidate seeds, in order. Set-level so that per-shoot work (a latency
    /// row, project counts per region) is done once per decision.
    fn raw(&self, cx: &ShootContext, seeds: &[&SeedInfo], snap: &Snapshot) -> Vec<RawScore>;
    /// The same raw values without details for the seeds at `positions` in the snapshot's
    /// per-seed columns, for a decision that shows only the winner's details. `None`: only
    /// [`Priority::raw`] has them.
    fn values(&self, _cx: &ShootContext, _positions: &[u32], _snap: &Snapshot) -> Option<Vec<f64>> {
        None
    }
    /// Maps raw values (the `value`s of [`Priority::raw`], or [`Priority::values`]) onto
    /// 0..=MAX_SCORE, higher is better.
    fn normalize(&self, values: &[f64]) -> Vec<f64>;
    /// Its raw values are latencies in milliseconds (what-if comparisons report their mean).
    fn raw_is_latency_ms(&self) -> bool {
        false
    }
    /// Cluster data this priority reads beyond what every decision reads.
    fn cluster_data(&self) -> Vec<ClusterData> {
        Vec::new()
    }
}

/// Linear map where the smallest raw value scores 100 and the largest 0; all equal -> 100.
pub fn lower_is_better(values: &[f64]) -> Vec<f64> {
    let (min, max) = values
        .iter()
        .fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), &v| {
            (lo.min(v), hi.max(v))
        });
    values
        .iter()
        .map(|&v| {
            if max > min {
                MAX_SCORE * (max - v) / (max - min)
            } else {
                MAX_SCORE
            }
        })
        .collect()
}

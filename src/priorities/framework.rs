//! What every priority is, and nothing about which priorities exist (the registry is `mod.rs`):
//! the [`Priority`] trait, the [`Details`] its one computation records into, and the shared
//! normalisation. Plugin files import this module, never the registry, so the folder has no
//! cycle.

pub use super::detail::Detail;
use crate::context::ShootContext;
use crate::plugin::ClusterData;
use crate::snapshot::Snapshot;

/// The best normalised score.
pub const MAX_SCORE: f64 = 100.0;

/// Where a priority puts each scored seed's [`Detail`] as it computes the seed's raw value:
/// explain mode records them, fast mode does not (and builds none).
pub struct Details<'a>(Option<&'a mut Vec<Detail>>);

impl<'a> Details<'a> {
    /// Records nothing: the values alone.
    pub const OFF: Details<'static> = Details(None);

    /// Appends every scored seed's detail to `out`, in the order of the seeds.
    pub fn record(out: &'a mut Vec<Detail>) -> Self {
        Details(Some(out))
    }

    /// Whether details are recorded, for a priority that keeps what they need only then.
    pub fn on(&self) -> bool {
        self.0.is_some()
    }

    /// The next seed's detail, built only when recording.
    pub fn put(&mut self, detail: impl FnOnce() -> Detail) {
        if let Some(out) = &mut self.0 {
            out.push(detail());
        }
    }

    /// The raw value of each seed by `value`, which also returns what the seed's detail is
    /// made of; `detail` makes it, only when recording. The loop is compiled once for each
    /// mode, so fast mode pays nothing for details.
    pub fn values<T>(
        &mut self,
        positions: &[u32],
        mut value: impl FnMut(u32) -> (f64, T),
        mut detail: impl FnMut(T) -> Detail,
    ) -> Vec<f64> {
        match &mut self.0 {
            None => positions.iter().map(|&i| value(i).0).collect(),
            Some(out) => {
                out.reserve(positions.len());
                positions
                    .iter()
                    .map(|&i| {
                        let (v, of) = value(i);
                        out.push(detail(of));
                        v
                    })
                    .collect()
            }
        }
    }
}

pub trait Priority: Send + Sync {
    fn name(&self) -> &'static str;
    /// The raw value of each seed at `positions` in the snapshot's per-seed columns, in order,
    /// putting each seed's detail into `details` as it goes: the one computation of both modes.
    /// Set-level so that per-shoot work (a latency row, the project's shoots per seed) is done
    /// once per decision.
    fn raw(
        &self,
        cx: &ShootContext,
        positions: &[u32],
        snap: &Snapshot,
        details: Details<'_>,
    ) -> Vec<f64>;
    /// A seed's raw value (and detail) depends on which other seeds are scored with it. Fast
    /// mode builds the winner's detail by scoring the winner alone, which needs `false` (the
    /// default); with `true` it records every seed's detail in its one pass instead.
    fn relative_to_candidates(&self) -> bool {
        false
    }
    /// Maps the raw values of [`Priority::raw`] onto 0..=MAX_SCORE, higher is better.
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

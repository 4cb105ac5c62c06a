//! What every filter is, and nothing about which filters exist (the registry is `mod.rs`): the
//! per-seed [`Predicate`], the set-level [`SetStep`] and the [`Stage`] a profile runs. Plugin files
//! import this module, never the registry, so the folder has no cycle (kube-scheduler's
//! `framework` package knows none of its plugins).

use crate::context::ShootContext;
use crate::outcome::FitError;
use crate::plugin::ClusterData;
use crate::reason::Reason;
use crate::snapshot::{SeedInfo, Snapshot};

/// A per-seed filter.
pub trait Predicate: Send + Sync {
    /// The stage name shown in explanations.
    fn name(&self) -> &'static str;
    fn filter(&self, cx: &ShootContext, seed: &SeedInfo, snap: &Snapshot) -> Result<(), Reason>;
    /// Cluster data this filter reads beyond what every decision reads.
    fn cluster_data(&self) -> Vec<ClusterData> {
        Vec::new()
    }
}

/// A step over the whole remaining set: returns, per seed (same order), why it is dropped.
/// An `Err` fails the shoot as a whole (e.g. a malformed region ConfigMap).
pub trait SetStep: Send + Sync {
    fn name(&self) -> &'static str;
    fn narrow(
        &self,
        cx: &ShootContext,
        seeds: &[&SeedInfo],
        snap: &Snapshot,
    ) -> Result<Vec<Option<Reason>>, FitError>;

    /// The same verdicts for a part of the remaining set, when they do not depend on the seeds
    /// outside that part; `None` when they might (the decision then runs the full pipeline).
    fn narrow_part(
        &self,
        _cx: &ShootContext,
        _seeds: &[&SeedInfo],
        _snap: &Snapshot,
    ) -> Result<Option<Vec<Option<Reason>>>, FitError> {
        Ok(None)
    }
}

pub enum Stage {
    Filter(Box<dyn Predicate>),
    Narrow(Box<dyn SetStep>),
}

impl Stage {
    pub fn name(&self) -> &'static str {
        match self {
            Stage::Filter(p) => p.name(),
            Stage::Narrow(s) => s.name(),
        }
    }
}

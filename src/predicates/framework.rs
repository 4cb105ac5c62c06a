//! What every filter is, and nothing about which filters exist (the registry is `mod.rs`): the
//! per-seed [`Predicate`], the set-level [`SetStep`] and the [`Stage`] a profile runs. Plugin files
//! import this module, never the registry, so the folder has no cycle (kube-scheduler's
//! `framework` package knows none of its plugins).

use std::any::Any;

use crate::context::ShootContext;
use crate::field_error::FieldError;
use crate::outcome::FitError;
use crate::plugin::ClusterData;
use crate::reason::Reason;
use crate::snapshot::{SeedInfo, Snapshot};

/// A per-seed filter.
pub trait Predicate: Send + Sync {
    /// The stage name shown in explanations.
    fn name(&self) -> &'static str;
    /// Work that depends on the shoot alone, done once per decision before any seed is looked
    /// at (kube-scheduler's PreFilter writing its CycleState). The decision keeps the result
    /// for this stage and hands it to every [`filter`](Predicate::filter) call of the decision,
    /// so a filter keeps its per-shoot data without fields in [`ShootContext`].
    fn prepare(&self, _cx: &ShootContext) -> Prepared {
        Prepared::default()
    }
    /// `state` is what [`prepare`](Predicate::prepare) returned for this shoot (or
    /// `Prepared::default()` when a caller asks one seed alone).
    fn filter(
        &self,
        cx: &ShootContext,
        state: &Prepared,
        seed: &SeedInfo,
        snap: &Snapshot,
    ) -> Result<(), Reason>;
    /// Cluster data this filter reads beyond what every decision reads.
    fn cluster_data(&self) -> Vec<ClusterData> {
        Vec::new()
    }
    /// Problems of the arguments that only the region catalogue with the configuration's
    /// `schedulers.shoot.regions` shows (a jurisdiction no region lies in), with their paths.
    fn check_regions(&self, _regions: &crate::regions::Regions) -> Vec<FieldError> {
        Vec::new()
    }
}

/// What a filter prepared for one shoot: a value of the filter's own type, read back with
/// [`get`](Prepared::get). Empty by default.
#[derive(Default)]
pub struct Prepared(Option<Box<dyn Any + Send + Sync>>);

impl Prepared {
    pub fn new<T: Any + Send + Sync>(state: T) -> Self {
        Prepared(Some(Box::new(state)))
    }

    /// The prepared value, if there is one of type `T`.
    pub fn get<T: Any>(&self) -> Option<&T> {
        self.0.as_deref().and_then(|s| s.downcast_ref())
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

//! `gardener-scheduler simulate`: the production decision code, run offline on manifest files.
//!
//! Pending shoots are scheduled in order of creation (then namespace/name); each placement
//! counts for the following ones, exactly as the controller would see it.

mod compare;
mod connect;
pub mod exec_guard;
mod live;
mod manifests;
mod output;
mod values;

use chrono::{DateTime, Utc};

pub use compare::{
    Comparison, Difference, Placement, Side, Summary, compare, write_compare_json,
    write_compare_table,
};
pub use connect::{ConnectError, Connected, MAX_KUBECONFIG_BYTES, connect};
pub(crate) use live::with_causes;
pub use live::{
    Limits, LiveError, LiveLandscape, MAX_OBJECT_BYTES, MAX_PAGE_BYTES, PAGE_SIZE, Progress,
    REQUEST_TIMEOUT, read_live,
};
pub use manifests::{Landscape, Location, ManifestError, Skipped};
pub use output::{
    render_explain, render_explain_with_defaults, write_json, write_table, write_yaml,
};

pub use crate::api::is_pending;
use crate::profile::Profile;
use crate::regions::Regions;
use crate::schedule::{Decision, FitError, schedule};
use crate::snapshot::Snapshot;

/// One shoot's outcome.
pub struct Outcome {
    /// `namespace/name`
    pub shoot: String,
    /// index into `Landscape::shoots`
    pub index: usize,
    pub result: Result<Decision, FitError>,
}

/// Every outcome of a run, kept (for small landscapes, tests and benchmarks); the command
/// streams [`Simulator`] instead, so that memory does not grow with pending shoots × seeds.
pub struct Simulation {
    pub outcomes: Vec<Outcome>,
    pub snapshot: Snapshot,
}

/// `--replay`: every shoot this scheduler would schedule (ours, not deleting, not self-hosted)
/// becomes pending again: its `spec.seedName` (and `status.seedName`) are cleared, so the
/// simulation decides the whole landscape anew in creation order. Returns how many were cleared.
pub fn make_pending(landscape: &mut Landscape, scheduler_names: &[String]) -> usize {
    let mut cleared = 0;
    for (i, shoot) in landscape.shoots.iter_mut().enumerate() {
        if !scheduler_names.iter().any(|n| n == shoot.scheduler_name())
            || shoot.metadata.deletion_timestamp.is_some()
            || shoot.is_self_hosted()
            || shoot.spec.seed_name.as_deref().is_none_or(str::is_empty)
        {
            continue;
        }
        shoot.spec.seed_name = None;
        if let Some(status) = shoot.status.as_mut() {
            status.seed_name = None;
        }
        if let Some(doc) = landscape.shoot_docs.get_mut(i)
            && let Some(mut value) = doc.value()
            && let Some(spec) = value.get_mut("spec").and_then(|s| s.as_mapping_mut())
        {
            spec.remove("seedName");
            *doc = manifests::Document::of(&value);
        }
        cleared += 1;
    }
    cleared
}

/// Builds the snapshot from everything in the landscape.
pub fn snapshot_of(landscape: &Landscape) -> Snapshot {
    let mut snap = Snapshot::new();
    for s in &landscape.seeds {
        snap.upsert_seed(s);
    }
    for cp in &landscape.cloud_profiles {
        snap.upsert_cloud_profile(cp);
    }
    for ncp in &landscape.namespaced_cloud_profiles {
        snap.upsert_namespaced_cloud_profile(ncp);
    }
    for p in &landscape.projects {
        snap.upsert_project(p);
    }
    for cm in &landscape.config_maps {
        snap.upsert_config_map(cm);
    }
    for s in &landscape.shoots {
        snap.upsert_shoot(s);
    }
    snap
}

/// Schedules the pending shoots of a landscape one at a time, in creation order, each
/// placement counting for the next, with `regions` as the region catalogue (the compiled-in one
/// with the configuration's `schedulers.shoot.regions`). An iterator: each outcome can be written and dropped before
/// the next decision.
pub struct Simulator<'a> {
    landscape: &'a Landscape,
    profile: &'a Profile,
    now: DateTime<Utc>,
    snapshot: Snapshot,
    pending: std::vec::IntoIter<usize>,
}

impl<'a> Simulator<'a> {
    pub fn new(
        landscape: &'a Landscape,
        profile: &'a Profile,
        scheduler_names: &[String],
        regions: &Regions,
        now: DateTime<Utc>,
    ) -> Self {
        let mut pending: Vec<usize> = (0..landscape.shoots.len())
            .filter(|&i| is_pending(&landscape.shoots[i], scheduler_names))
            .collect();
        pending.sort_by_key(|&i| {
            let s = &landscape.shoots[i];
            (
                s.metadata.creation_timestamp.as_ref().map(|t| t.0),
                crate::api::object_key(&s.metadata),
            )
        });
        let mut snapshot = snapshot_of(landscape);
        snapshot.set_regions(regions.clone());
        Simulator {
            landscape,
            profile,
            now,
            snapshot,
            pending: pending.into_iter(),
        }
    }

    /// How many shoots are still to be decided.
    pub fn remaining(&self) -> usize {
        self.pending.len()
    }

    /// The landscape as decided on, with every placement made so far.
    pub fn snapshot(&self) -> &Snapshot {
        &self.snapshot
    }

    /// The snapshot with every placement made so far.
    pub fn into_snapshot(self) -> Snapshot {
        self.snapshot
    }
}

impl Iterator for Simulator<'_> {
    type Item = Outcome;

    fn next(&mut self) -> Option<Outcome> {
        let i = self.pending.next()?;
        let shoot = &self.landscape.shoots[i];
        // a gated shoot is not decided, as the controller would not decide it
        let result = match crate::api::Gates::of(&shoot.metadata).reason() {
            Some(reason) => Err(FitError::Gated { reason }),
            None => schedule(shoot, &self.snapshot, self.profile, self.now),
        };
        if let Ok(d) = &result {
            let mut placed = shoot.clone();
            placed.spec.seed_name = Some(d.seed.clone());
            self.snapshot.upsert_shoot(&placed);
        }
        Some(Outcome {
            shoot: crate::api::object_key(&shoot.metadata),
            index: i,
            result,
        })
    }
}

/// Schedules every pending shoot of the landscape, in creation order, keeping every outcome.
pub fn simulate(
    landscape: &Landscape,
    profile: &Profile,
    scheduler_names: &[String],
    regions: &Regions,
    now: DateTime<Utc>,
) -> Simulation {
    let mut sim = Simulator::new(landscape, profile, scheduler_names, regions, now);
    let outcomes = sim.by_ref().collect();
    Simulation {
        outcomes,
        snapshot: sim.into_snapshot(),
    }
}

//! `gardener-scheduler simulate`: the production decision code, run offline on manifest files.
//!
//! Pending shoots are scheduled in order of creation (then namespace/name); each placement
//! counts for the following ones, exactly as the controller would see it.

mod manifests;
mod output;

use chrono::{DateTime, Utc};

pub use manifests::{Landscape, ManifestError};
pub use output::{render_explain, render_json, render_table, render_yaml};

use crate::api::Shoot;
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

pub struct Simulation {
    pub outcomes: Vec<Outcome>,
    pub snapshot: Snapshot,
}

/// Is this shoot waiting for this scheduler? Unassigned, ours, not deleting, not self-hosted.
pub fn is_pending(shoot: &Shoot, scheduler_names: &[String]) -> bool {
    shoot.spec.seed_name.as_deref().is_none_or(str::is_empty)
        && scheduler_names.iter().any(|n| n == shoot.scheduler_name())
        && shoot.metadata.deletion_timestamp.is_none()
        && !shoot.is_self_hosted()
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

/// Schedules every pending shoot of the landscape, in creation order, with `regions` as the
/// region catalogue (the compiled-in one with the configuration's `schedulers.shoot.regions`).
pub fn simulate(
    landscape: &Landscape,
    profile: &Profile,
    scheduler_names: &[String],
    regions: &Regions,
    now: DateTime<Utc>,
) -> Simulation {
    let mut snapshot = snapshot_of(landscape);
    snapshot.set_regions(regions.clone());
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
    let mut outcomes = Vec::with_capacity(pending.len());
    for i in pending {
        let shoot = &landscape.shoots[i];
        let result = schedule(shoot, &snapshot, profile, now);
        if let Ok(d) = &result {
            let mut placed = shoot.clone();
            placed.spec.seed_name = Some(d.seed.clone());
            snapshot.upsert_shoot(&placed);
        }
        outcomes.push(Outcome {
            shoot: crate::api::object_key(&shoot.metadata),
            index: i,
            result,
        });
    }
    Simulation { outcomes, snapshot }
}

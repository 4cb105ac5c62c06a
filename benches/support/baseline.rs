//! The upstream cost model: seed usage is recomputed from the whole shoot list for every
//! decision, then the same decision runs on it.
//!
//! Upstream Gardener lists (deep-copies) every Shoot from its informer cache on every decision and
//! counts shoots per seed. Here each shoot is rebuilt from a compact entry (name, namespace, seed,
//! purpose, HA type — a few small allocations instead of a full deep copy) and counted into a
//! fresh usage index, so this baseline is a lower bound of upstream's per-decision cost.

use chrono::{DateTime, Utc};
use gardener_scheduler::api::{
    ControlPlane, FailureTolerance, HighAvailability, ObjectMeta, Shoot, ShootSpec,
};
use gardener_scheduler::profile::Profile;
use gardener_scheduler::schedule::{self, Decision, FitError};
use gardener_scheduler::snapshot::{Snapshot, Usage};

/// One existing shoot, as little as the recount needs.
#[derive(Clone, Debug)]
pub struct Placed {
    pub namespace: Box<str>,
    pub name: Box<str>,
    /// index into the seed name table
    pub seed: u32,
    pub purpose: Option<Box<str>>,
    pub failure_tolerance: Option<Box<str>>,
}

impl Placed {
    pub fn of(shoot: &Shoot, seed: u32) -> Placed {
        Placed {
            namespace: shoot
                .metadata
                .namespace
                .as_deref()
                .unwrap_or_default()
                .into(),
            name: shoot.metadata.name.as_deref().unwrap_or_default().into(),
            seed,
            purpose: shoot.spec.purpose.as_deref().map(Into::into),
            failure_tolerance: shoot.failure_tolerance_type().map(Into::into),
        }
    }

    /// The shoot again, as a list call would hand it out.
    pub fn to_shoot(&self, seed_names: &[String]) -> Shoot {
        Shoot {
            metadata: ObjectMeta {
                name: Some(self.name.to_string()),
                namespace: Some(self.namespace.to_string()),
                ..Default::default()
            },
            spec: ShootSpec {
                seed_name: Some(seed_names[self.seed as usize].clone()),
                purpose: self.purpose.as_deref().map(Into::into),
                control_plane: self.failure_tolerance.as_deref().map(|t| ControlPlane {
                    high_availability: Some(HighAvailability {
                        failure_tolerance: FailureTolerance {
                            type_: t.to_string(),
                        },
                    }),
                    zones: Vec::new(),
                }),
                ..Default::default()
            },
            status: None,
        }
    }
}

/// Seed usage counted from scratch over every shoot.
pub fn recount(placed: &[Placed], seed_names: &[String]) -> Usage {
    let mut usage = Usage::default();
    for p in placed {
        usage.upsert(&p.to_shoot(seed_names));
    }
    usage
}

/// Recounts usage, decides on it, and puts the snapshot's own index back. The recount and its
/// teardown are part of the cost.
pub fn decide(
    shoot: &Shoot,
    snap: &mut Snapshot,
    placed: &[Placed],
    seed_names: &[String],
    profile: &Profile,
    now: DateTime<Utc>,
) -> Result<Decision, FitError> {
    let indexed = snap.replace_usage(recount(placed, seed_names));
    let result = schedule::decide(shoot, snap, profile, now);
    drop(snap.replace_usage(indexed));
    result
}

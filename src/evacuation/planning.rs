//! The plans of one round, computed from one read of the landscape on the blocking pool: a
//! plan of a large seed is CPU work, and the read is the one `simulate --live` makes.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};

use super::publish;
use crate::chain::{ProfileChain, Selection};
use crate::config::SchedulerConfiguration;
use crate::plan;
use crate::regions::Regions;
use crate::simulate;

/// The drain settings of a published plan: those of `plan drain` without flags.
pub const PLAN_SETTINGS: plan::windows::Settings = plan::windows::Settings {
    horizon_seconds: 168 * 3600,
    max_concurrent: 2,
    move_duration_seconds: 30 * 60,
};

/// One plan to compute.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Job {
    /// The shoots of an unhealthy seed, elsewhere.
    Evacuate(String),
    /// The shoots that left a seed (`namespace/name`), back to it.
    Failback(String, Vec<String>),
}

impl Job {
    pub fn seed(&self) -> &str {
        match self {
            Job::Evacuate(s) | Job::Failback(s, _) => s,
        }
    }
}

/// What one round reads and plans with.
pub struct Inputs<'a> {
    pub client: &'a kube::Client,
    pub chain: &'a ProfileChain,
    pub config: &'a SchedulerConfiguration,
    pub regions: &'a Regions,
    /// Every seed judged unhealthy: drained in every evacuation plan, so that none of them is
    /// a destination and their shoots take their room on the destinations too.
    pub unhealthy: &'a [String],
    pub now: DateTime<Utc>,
}

/// The landscape read once, and the plan of each job; `Err` when the landscape cannot be read
/// or no profile is active.
pub fn plans(
    handle: &tokio::runtime::Handle,
    inputs: &Inputs<'_>,
    jobs: &[Job],
) -> Result<BTreeMap<Job, Result<plan::Plan, plan::PlanError>>, String> {
    let live = handle.block_on(simulate::read_live(
        inputs.client,
        simulate::PAGE_SIZE,
        simulate::Limits::default(),
        &inputs.chain.cluster_data(),
        true,
        &mut |_| {},
    ));
    let landscape = live
        .map_err(|e| format!("reading the landscape: {e}"))?
        .landscape;
    let profile = match inputs.chain.select(inputs.now) {
        Selection::Profile { profile, .. } => profile,
        Selection::Deferred { reason, .. } => {
            return Err(format!("no profile is active: {reason}"));
        }
    };
    let cx = plan::Context {
        landscape: &landscape,
        profile,
        scheduler_names: &inputs.config.schedulers.shoot.scheduler_names,
        regions: inputs.regions,
        now: inputs.now,
        explain: Some(plan::EXPLAIN_TOP),
        live_migration: false,
        prefer_live: false,
        seed_index: plan::SeedIndex::default(),
    };
    Ok(jobs
        .iter()
        .map(|job| {
            let plan = match job {
                Job::Evacuate(seed) => plan::drain(&cx, inputs.unhealthy, PLAN_SETTINGS.clone())
                    .map(|p| publish::leaving(p, seed)),
                Job::Failback(seed, shoots) => {
                    plan::failback(&cx, seed, shoots, PLAN_SETTINGS.clone())
                }
            };
            (job.clone(), plan)
        })
        .collect())
}

//! `gardener-scheduler plan outage SEED --during FROM..TO`: a seed outage rehearsed offline,
//! with the spans of `schedulers.shoot.evacuation` and `failback` and the planners the scheduler
//! process publishes with ([`gardener_scheduler::plan::outage`]).

use chrono::{DateTime, SecondsFormat, Utc};

use gardener_scheduler::chain::{ProfileChain, Selection};
use gardener_scheduler::compile::Compiled;
use gardener_scheduler::config::SchedulerConfiguration;
use gardener_scheduler::evacuation::PLAN_SETTINGS;
use gardener_scheduler::plan::{self, outage};
use gardener_scheduler::regions::Regions;
use gardener_scheduler::simulate::Landscape;

use super::args::*;
use super::common::*;

fn ts(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// What the scheduler process would publish for `seed` failing over `(from, to)`: when it is
/// judged unhealthy and healthy again, the evacuation plan, the shoots moved by the time the
/// seed is well, and the fail-back plan.
pub(crate) struct Rehearsal {
    pub(crate) unhealthy_at: DateTime<Utc>,
    pub(crate) healthy_at: DateTime<Utc>,
    pub(crate) evacuation: plan::Plan,
    /// The shoots whose evacuation starts before the seed is well again (`namespace/name`).
    pub(crate) left: Vec<String>,
    pub(crate) failback: plan::Plan,
}

/// Plans the outage on `landscape` (which ends with the evacuation's early moves done) as the
/// process would: the profile active at each instant, the process's plan settings.
pub(crate) fn rehearse(
    seed: &str,
    (from, to): (DateTime<Utc>, DateTime<Utc>),
    landscape: &mut Landscape,
    cfg: &SchedulerConfiguration,
    chain: &ProfileChain,
    (live_migration, prefer_live): (bool, bool),
) -> Result<Rehearsal, Failure> {
    let shoot_cfg = &cfg.schedulers.shoot;
    let (unhealthy_at, healthy_at) = outage::judged(
        (from, to),
        shoot_cfg.evacuation.after,
        shoot_cfg.failback.after,
    )
    .map_err(Failure::bad_input)?;
    let regions = Regions::with_overrides(&shoot_cfg.regions);
    let plan_at =
        |landscape: &Landscape,
         now: DateTime<Utc>,
         job: &dyn Fn(&plan::Context) -> Result<plan::Plan, plan::PlanError>| {
            let profile = match chain.select(now) {
                Selection::Profile { profile, .. } => profile,
                Selection::Deferred { reason, .. } => {
                    return Err(Failure::bad_input(format!(
                        "no profile is active at {}: {reason}",
                        ts(now)
                    )));
                }
            };
            let cx = plan::Context {
                landscape,
                profile,
                scheduler_names: &shoot_cfg.scheduler_names,
                regions: &regions,
                now,
                explain: Some(plan::EXPLAIN_TOP),
                live_migration,
                prefer_live,
                seed_index: plan::SeedIndex::default(),
            };
            job(&cx).map_err(|e| Failure::bad_input(e.to_string()))
        };
    let seeds = [seed.to_string()];
    let evacuation = plan_at(landscape, unhealthy_at, &|cx| {
        plan::drain(cx, &seeds, PLAN_SETTINGS.clone())
    })?;
    // the moves that start while the seed is down have happened when it is well again
    let done = outage::started_before(&evacuation, to);
    let left: Vec<String> = done
        .iter()
        .map(|(i, _)| gardener_scheduler::api::object_key(&landscape.shoots[*i].metadata))
        .collect();
    outage::moved(landscape, &done);
    let failback = plan_at(landscape, healthy_at, &|cx| {
        plan::failback(cx, seed, &left, PLAN_SETTINGS.clone())
    })?;
    Ok(Rehearsal {
        unhealthy_at,
        healthy_at,
        evacuation,
        left,
        failback,
    })
}

pub(crate) fn outage(
    seed: &str,
    (from, to): (DateTime<Utc>, DateTime<Utc>),
    common: &PlanArgs,
) -> Outcome {
    if common.evaluated.now.is_some() {
        return Err(Failure::bad_input(
            "plan outage plans at the instants the outage gives (--during); --now is not used",
        ));
    }
    if !matches!(common.evaluated.output, Output::Table | Output::Json) {
        return Err(Failure::bad_input("plan outage writes -o table or -o json"));
    }
    let l = &common.evaluated.landscape;
    let Compiled {
        config: cfg, chain, ..
    } = load_offline(l.config.as_ref(), l.strict)?;
    let mut landscape = load_landscape(l, &cfg, &[&chain], true, "planned")?;
    report_skipped(&landscape, l.strict)?;
    let Rehearsal {
        unhealthy_at,
        healthy_at,
        evacuation,
        left,
        failback,
    } = rehearse(
        seed,
        (from, to),
        &mut landscape,
        &cfg,
        &chain,
        (common.live_migration, common.prefer_live),
    )?;
    let text = match common.evaluated.output {
        Output::Json => {
            let v = serde_json::json!({
                "seed": seed,
                "outage": {"from": ts(from), "to": ts(to)},
                "judgedUnhealthyAt": ts(unhealthy_at),
                "judgedHealthyAt": ts(healthy_at),
                "movedDuringOutage": left,
                "evacuation": evacuation,
                "failback": failback,
            });
            serde_json::to_string_pretty(&v).expect("JSON of plain values") + "\n"
        }
        _ => format!(
            "Seed {seed} fails from {} to {}: judged unhealthy at {} (evacuation.after), healthy \
             again at {} (failback.after); {} of its shoots have moved by then.\n\n{}\n{}",
            ts(from),
            ts(to),
            ts(unhealthy_at),
            ts(healthy_at),
            left.len(),
            plan::output::render_table(&evacuation),
            plan::output::render_table(&failback)
        ),
    };
    let write = |out: &mut dyn std::io::Write| out.write_all(text.as_bytes());
    Ok(match common.evaluated.output {
        Output::Table => write_stdout_text(write),
        _ => write_stdout(write),
    })
}

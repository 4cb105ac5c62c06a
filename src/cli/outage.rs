//! `gardener-scheduler plan outage SEED --during FROM..TO`: a seed outage rehearsed offline,
//! with the spans of `schedulers.shoot.evacuation` and `failback` and the planners the scheduler
//! process publishes with ([`gardener_scheduler::plan::outage`]).

use chrono::{DateTime, SecondsFormat, Utc};

use gardener_scheduler::chain::Selection;
use gardener_scheduler::compile::Compiled;
use gardener_scheduler::evacuation::PLAN_SETTINGS;
use gardener_scheduler::plan::{self, outage};
use gardener_scheduler::regions::Regions;
use gardener_scheduler::simulate::Landscape;

use super::args::*;
use super::common::*;

fn ts(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

pub(crate) fn outage(
    seed: &str,
    (from, to): (DateTime<Utc>, DateTime<Utc>),
    common: &PlanArgs,
) -> Outcome {
    if common.now.is_some() {
        return Err(Failure::bad_input(
            "plan outage plans at the instants the outage gives (--during); --now is not used",
        ));
    }
    if !matches!(common.output, Output::Table | Output::Json) {
        return Err(Failure::bad_input("plan outage writes -o table or -o json"));
    }
    let l = &common.landscape;
    let Compiled {
        config: cfg, chain, ..
    } = load_offline(l.config.as_ref(), l.strict)?;
    let mut landscape = load_landscape(l, &cfg, &[&chain], true, "planned")?;
    report_skipped(&landscape, l.strict)?;
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
                live_migration: common.live_migration,
                prefer_live: common.prefer_live,
                seed_index: plan::SeedIndex::default(),
            };
            job(&cx).map_err(|e| Failure::bad_input(e.to_string()))
        };
    let seeds = [seed.to_string()];
    let evacuation = plan_at(&landscape, unhealthy_at, &|cx| {
        plan::drain(cx, &seeds, PLAN_SETTINGS.clone())
    })?;
    // the moves that start while the seed is down have happened when it is well again
    let done = outage::started_before(&evacuation, to);
    let left: Vec<String> = done
        .iter()
        .map(|(i, _)| gardener_scheduler::api::object_key(&landscape.shoots[*i].metadata))
        .collect();
    outage::moved(&mut landscape, &done);
    let failback = plan_at(&landscape, healthy_at, &|cx| {
        plan::failback(cx, seed, &left, PLAN_SETTINGS.clone())
    })?;
    let text = match common.output {
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
    Ok(match common.output {
        Output::Table => write_stdout_text(write),
        _ => write_stdout(write),
    })
}

//! `gardener-scheduler plan drain|rebalance`: where shoots should move, and when.

use std::process::ExitCode;

use chrono::{Datelike, Utc};

use gardener_scheduler::chain::Selection;
use gardener_scheduler::compile::Compiled;
use gardener_scheduler::plan;
use gardener_scheduler::regions::Regions;
use gardener_scheduler::report;

use super::args::*;
use super::common::*;

pub(crate) fn plan_cmd(cmd: PlanCommand) -> ExitCode {
    match cmd {
        PlanCommand::Apply(args) => super::apply::apply_cmd(args),
        PlanCommand::Outage {
            seed,
            during,
            common,
        } => finish(super::outage::outage(&seed, during, &common)),
        cmd => finish(plan(&cmd)),
    }
}

fn plan(cmd: &PlanCommand) -> Outcome {
    let common = match cmd {
        PlanCommand::Drain { common, .. } | PlanCommand::Rebalance { common, .. } => common,
        PlanCommand::Apply(_) | PlanCommand::Outage { .. } => {
            return Err(Failure::bad_input("plan apply makes no plan"));
        }
    };
    let l = &common.evaluated.landscape;
    let Compiled {
        config: cfg, chain, ..
    } = load_offline(l.config.as_ref(), l.strict)?;
    // The documents carry the maintenance windows and make the binding documents.
    let landscape = load_landscape(l, &cfg, &[&chain], true, "planned")?;
    report_skipped(&landscape, l.strict)?;
    let now = common.evaluated.now.unwrap_or_else(Utc::now);
    check_times(now, common).map_err(Failure::bad_input)?;
    let profile = match chain.select(now) {
        Selection::Profile { profile, .. } => profile,
        Selection::Deferred { reason, .. } => {
            return Err(Failure::bad_input(format!(
                "no profile is active at {}: {reason}; pass --now inside an active entry",
                now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            )));
        }
    };
    let regions = Regions::with_overrides(&cfg.schedulers.shoot.regions);
    let cx = plan::Context {
        landscape: &landscape,
        profile,
        scheduler_names: &cfg.schedulers.shoot.scheduler_names,
        regions: &regions,
        now,
        explain: if common.explain {
            None
        } else {
            Some(plan::EXPLAIN_TOP)
        },
        live_migration: common.live_migration,
        prefer_live: common.prefer_live,
        seed_index: plan::SeedIndex::default(),
    };
    let settings = plan::windows::Settings {
        horizon_seconds: common.horizon.as_secs() as i64,
        max_concurrent: common.max_concurrent as usize,
        move_duration_seconds: common.move_duration.as_secs().max(1) as i64,
    };
    let p = match cmd {
        PlanCommand::Drain { seeds, .. } => plan::drain(&cx, seeds, settings),
        PlanCommand::Rebalance {
            max_moves,
            objective,
            timeout,
            ..
        } => rebalance(&cx, *objective, *max_moves as usize, *timeout, settings),
        PlanCommand::Apply(_) | PlanCommand::Outage { .. } => {
            return Err(Failure::bad_input("plan apply makes no plan"));
        }
    }
    .map_err(|e| match e {
        plan::PlanError::Timeout { .. } => Failure::failed(e.to_string()),
        e => Failure::bad_input(e.to_string()),
    })?;
    let text = match common.evaluated.output {
        Output::Table => plan::output::render_table(&p),
        Output::Json => plan::output::render_json(&p),
        Output::Yaml => plan::output::render_yaml(&landscape, &p),
        Output::Html => report::render(&p).map_err(|e| Failure::failed(e.to_string()))?,
    };
    let write = |out: &mut dyn std::io::Write| out.write_all(text.as_bytes());
    Ok(match common.evaluated.output {
        Output::Table => write_stdout_text(write),
        _ => write_stdout(write),
    })
}

/// `plan rebalance`: the search, within `timeout`, showing its progress on a terminal.
fn rebalance(
    cx: &plan::Context<'_>,
    objective: plan::Objective,
    max_moves: usize,
    timeout: std::time::Duration,
    settings: plan::windows::Settings,
) -> Result<plan::Plan, plan::PlanError> {
    let mut progress = rebalance_progress(max_moves);
    let mut budget = plan::Budget::new(
        Some((std::time::Instant::now() + timeout, timeout)),
        progress
            .as_mut()
            .map(|p| p as &mut dyn FnMut(usize, usize, usize)),
    );
    let result = plan::rebalance_within(cx, objective, max_moves, settings, &mut budget);
    if progress.is_some() {
        eprint!("\r\x1b[K");
    }
    result
}

/// Progress of a rebalance search on stderr, only when stderr is a terminal: one line,
/// rewritten between batches of decided shoots.
fn rebalance_progress(max_moves: usize) -> Option<impl FnMut(usize, usize, usize)> {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal().then_some(move |moves: usize, done: usize, total: usize| {
        eprint!(
            "\rrebalance: {moves}/{max_moves} move(s) planned; looking for the next: {done}/{total} shoot(s) decided\x1b[K"
        );
    })
}

/// The longest --horizon: ten years of maintenance windows.
const MAX_HORIZON: std::time::Duration = std::time::Duration::from_secs(10 * 366 * 24 * 3600);

/// Start times must stay writable as RFC 3339 (years up to 9999) and every move must fit its
/// horizon.
fn check_times(now: chrono::DateTime<Utc>, common: &PlanArgs) -> Result<(), String> {
    if common.horizon > MAX_HORIZON {
        return Err(format!(
            "--horizon {}: at most {}h (ten years)",
            gardener_scheduler::go_duration::format(common.horizon),
            MAX_HORIZON.as_secs() / 3600
        ));
    }
    if common.move_duration > common.horizon {
        return Err(format!(
            "--move-duration {} is longer than --horizon {}: no move could be scheduled",
            gardener_scheduler::go_duration::format(common.move_duration),
            gardener_scheduler::go_duration::format(common.horizon)
        ));
    }
    // Two days of slack: a window occurrence may begin a day before and end a day after.
    let last = chrono::Duration::from_std(common.horizon)
        .ok()
        .and_then(|h| now.checked_add_signed(h + chrono::Duration::days(2)));
    match last {
        Some(t) if t.year() <= 9999 => Ok(()),
        _ => Err(format!(
            "--now {} with --horizon {}: start times would pass the year 9999, which RFC 3339 \
             cannot write",
            now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
            gardener_scheduler::go_duration::format(common.horizon)
        )),
    }
}

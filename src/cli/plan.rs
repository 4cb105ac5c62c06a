//! `gardener-scheduler plan drain|rebalance`: where shoots should move, and when.

use std::process::ExitCode;

use chrono::{Datelike, Utc};

use gardener_scheduler::chain::Selection;
use gardener_scheduler::compile::Compiled;
use gardener_scheduler::plan;
use gardener_scheduler::regions::Regions;

use super::args::*;
use super::common::*;

pub(crate) fn plan_cmd(cmd: PlanCommand) -> ExitCode {
    let common = match &cmd {
        PlanCommand::Drain { common, .. } | PlanCommand::Rebalance { common, .. } => common,
    };
    let Compiled {
        config: cfg, chain, ..
    } = match load_offline(common.config.as_ref(), common.strict) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    // The documents carry the maintenance windows and make the binding documents.
    let landscape = match load_landscape(&common.source, &cfg, &[&chain], true, "planned") {
        Ok(l) => l,
        Err(code) => return code,
    };
    if let Err(code) = report_skipped(&landscape, common.strict) {
        return code;
    }
    let now = common.now.unwrap_or_else(Utc::now);
    if let Err(e) = check_times(now, common) {
        eprintln!("error: {e}");
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    let profile = match chain.select(now) {
        Selection::Profile { profile, .. } => profile,
        Selection::Deferred { reason, .. } => {
            say!(
                "error: no profile is active at {}: {reason}; pass --now inside an active entry",
                now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            );
            return ExitCode::from(EXIT_BAD_INPUT);
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
    };
    let settings = plan::windows::Settings {
        horizon_seconds: common.horizon.as_secs() as i64,
        max_concurrent: common.max_concurrent as usize,
        move_duration_seconds: common.move_duration.as_secs().max(1) as i64,
    };
    let result = match &cmd {
        PlanCommand::Drain { seeds, .. } => plan::drain(&cx, seeds, settings),
        PlanCommand::Rebalance {
            max_moves,
            objective,
            timeout,
            ..
        } => {
            let mut progress = rebalance_progress(*max_moves as usize);
            let mut budget = plan::Budget::new(
                Some((std::time::Instant::now() + *timeout, *timeout)),
                progress
                    .as_mut()
                    .map(|p| p as &mut dyn FnMut(usize, usize, usize)),
            );
            let result =
                plan::rebalance_within(&cx, *objective, *max_moves as usize, settings, &mut budget);
            if progress.is_some() {
                eprint!("\r\x1b[K");
            }
            result
        }
    };
    let p = match result {
        Ok(p) => p,
        Err(e @ plan::PlanError::Timeout { .. }) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
        Err(e) => {
            say!("error: {e}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let text = match common.output {
        PlanOutput::Table => plan::output::render_table(&p),
        PlanOutput::Json => plan::output::render_json(&p),
        PlanOutput::Yaml => plan::output::render_yaml(&landscape, &p),
        PlanOutput::Html => plan::html::render(&p),
    };
    let write = |out: &mut dyn std::io::Write| out.write_all(text.as_bytes());
    match common.output {
        PlanOutput::Table => write_stdout_text(write),
        _ => write_stdout(write),
    }
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
            humantime::format_duration(common.horizon),
            MAX_HORIZON.as_secs() / 3600
        ));
    }
    if common.move_duration > common.horizon {
        return Err(format!(
            "--move-duration {} is longer than --horizon {}: no move could be scheduled",
            humantime::format_duration(common.move_duration),
            humantime::format_duration(common.horizon)
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
            humantime::format_duration(common.horizon)
        )),
    }
}

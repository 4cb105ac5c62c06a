//! `gardener-scheduler plan drain|rebalance`: where shoots should move, and when.

use std::process::ExitCode;

use chrono::Utc;

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
            ..
        } => plan::rebalance(&cx, *objective, *max_moves, settings),
    };
    let p = match result {
        Ok(p) => p,
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

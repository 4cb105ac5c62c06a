//! `gardener-scheduler explain NAMESPACE/NAME`: one shoot's recorded decision, the decision now,
//! and what changed, read from manifest files or from the cluster (read-only).

use std::process::ExitCode;

use chrono::Utc;

use gardener_scheduler::chain::Selection;
use gardener_scheduler::regions::Regions;
use gardener_scheduler::{explain, report};

use super::args::*;
use super::common::*;

pub(crate) fn explain_cmd(args: ExplainArgs) -> ExitCode {
    finish(explain(&args))
}

fn explain(args: &ExplainArgs) -> Outcome {
    let l = &args.landscape;
    let compiled = load_offline(l.config.as_ref(), l.strict)?;
    let (cfg, chain) = (compiled.config, compiled.chain);
    let landscape = load_landscape(l, &cfg, &[&*chain], false, "explained")?;
    report_skipped(&landscape, l.strict)?;
    let now = args.now.unwrap_or_else(Utc::now);
    let profile = match chain.select(now) {
        Selection::Profile { profile, .. } => profile,
        Selection::Deferred { reason, .. } => {
            return Err(Failure::failed(format!(
                "scheduling is deferred now ({reason}): no profile is active to decide {} with; \
                 --now names another instant",
                args.shoot
            )));
        }
    };
    let regions = Regions::with_overrides(&cfg.schedulers.shoot.regions);
    let e = explain::explain(&landscape, &args.shoot, profile, &regions, now)
        .map_err(|e| Failure::bad_input(e.to_string()))?;
    Ok(match args.output {
        ExplainOutput::Text => {
            write_stdout_text(|out| out.write_all(explain::render_explanation(&e).as_bytes()))
        }
        ExplainOutput::Json => write_stdout(|out| {
            let text = serde_json::to_string_pretty(&e).map_err(std::io::Error::other)?;
            writeln!(out, "{}", gardener_scheduler::escape::json(&text))
        }),
        ExplainOutput::Html => write_stdout(|out| {
            let page = report::render_explanation(&e).map_err(std::io::Error::other)?;
            out.write_all(page.as_bytes())
        }),
    })
}

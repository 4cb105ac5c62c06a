//! `gardener-scheduler simulate`: decide offline (or on the live landscape, read-only).

use std::process::ExitCode;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use gardener_scheduler::chain::{ProfileChain, Selection};
use gardener_scheduler::compile::Compiled;
use gardener_scheduler::config::SchedulerConfiguration;
use gardener_scheduler::regions::Regions;
use gardener_scheduler::report;
use gardener_scheduler::simulate::{self, Landscape};
use gardener_scheduler::snapshot::Snapshot;

use super::args::*;
use super::common::*;

/// Writes the output, escaped as text unless it is JSON, YAML or HTML.
fn write_output(
    output: Output,
    write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>,
) -> ExitCode {
    match output {
        Output::Json | Output::Yaml | Output::Html => write_stdout(write),
        Output::Table => write_stdout_text(write),
    }
}

pub(crate) fn simulate_cmd(args: SimulateArgs) -> ExitCode {
    finish(simulate(&args))
}

/// A configuration to decide with, loaded and compiled.
struct Side {
    cfg: SchedulerConfiguration,
    chain: Arc<ProfileChain>,
}

/// Loads what the flags name, then runs the one mode they ask for: `--timeline`, `--compare`,
/// `--explain`, or the decisions of every pending shoot.
fn simulate(args: &SimulateArgs) -> Outcome {
    check_output(args)?;
    let l = &args.evaluated.landscape;
    let new = side(load_offline(l.config.as_ref(), l.strict)?);
    let old = match &args.compare {
        Some(path) => Some(side(load_offline_as(
            &format!("--compare {}: ", path.display()),
            Some(path),
            l.strict,
        )?)),
        None => None,
    };
    let (mut landscape, before_replay) = landscape(args, &new, old.as_ref())?;
    if let Some(range) = args.timeline {
        let outage = match &args.outage {
            Some((seed, window)) => {
                let r = super::outage::rehearse(
                    seed,
                    *window,
                    &mut landscape,
                    &new.cfg,
                    &new.chain,
                    (false, false),
                )?;
                Some(super::timeline::outage_view(seed, *window, &r))
            }
            None => None,
        };
        return Ok(super::timeline::timeline(
            &new.chain,
            range,
            args.evaluated.output,
            outage.as_ref(),
        ));
    }
    let now = args.evaluated.now.unwrap_or_else(Utc::now);
    let profile = match new.chain.select(now) {
        Selection::Profile { profile, .. } => profile,
        Selection::Deferred { reason, retry_at } => {
            let next = retry_at
                .map(|t| format!("; next change at {}", rfc3339(t)))
                .unwrap_or_default();
            let text = format!(
                "Scheduling deferred at {}: {reason}{next}. Pending shoots stay pending.",
                rfc3339(now)
            );
            return Ok(write_deferred(
                args.evaluated.output,
                &text,
                &reason.to_string(),
                retry_at,
            ));
        }
    };
    let regions = Regions::with_overrides(&new.cfg.schedulers.shoot.regions);
    let new_side = simulate::Side {
        label: "new",
        profile,
        scheduler_names: &new.cfg.schedulers.shoot.scheduler_names,
        regions: &regions,
    };
    if let Some(old) = &old {
        return Ok(compare(args, &landscape, old, &new_side, now));
    }
    let first =
        simulate::Simulator::new(&landscape, profile, new_side.scheduler_names, &regions, now);
    warn_about_snapshot(first.snapshot());
    match &args.explain {
        Some(key) => explain(&landscape, first, key),
        None => Ok(decide(
            args,
            &landscape,
            &new_side,
            now,
            first,
            before_replay,
        )),
    }
}

fn side(compiled: Compiled) -> Side {
    Side {
        cfg: compiled.config,
        chain: compiled.chain,
    }
}

/// The output formats a mode cannot write are refused before anything is loaded.
fn check_output(args: &SimulateArgs) -> Result<(), Failure> {
    if args.timeline.is_some() && matches!(args.evaluated.output, Output::Yaml | Output::Html) {
        return Err(Failure::bad_input(
            "--timeline: -o yaml and -o html are not available; use -o table or -o json",
        ));
    }
    if args.compare.is_some() && args.evaluated.output == Output::Yaml {
        return Err(Failure::bad_input(
            "--compare: -o yaml is not available; use -o table or -o json",
        ));
    }
    Ok(())
}

/// The landscape of the flags, with `--replay` applied and skipped objects reported; with
/// `--replay -o html`, also each seed's load as bound before the replay (the report shows it).
fn landscape(
    args: &SimulateArgs,
    new: &Side,
    old: Option<&Side>,
) -> Result<(Landscape, Option<Snapshot>), Failure> {
    // `-o yaml` reproduces every shoot's document, and an outage's plans read the shoots'
    // maintenance windows from theirs; the other outputs do not need them.
    let documents = args.evaluated.output == Output::Yaml || args.outage.is_some();
    let mut chains = vec![&*new.chain];
    chains.extend(old.map(|o| &*o.chain));
    let mut landscape = load_landscape(
        &args.evaluated.landscape,
        &new.cfg,
        &chains,
        documents,
        "simulated",
    )?;
    let before_replay = (args.replay && args.evaluated.output == Output::Html)
        .then(|| simulate::snapshot_of(&landscape));
    if args.replay {
        let mut names = new.cfg.schedulers.shoot.scheduler_names.clone();
        if let Some(old) = old {
            names.extend(old.cfg.schedulers.shoot.scheduler_names.iter().cloned());
        }
        let n = simulate::make_pending(&mut landscape, &names);
        say!("replay: {n} bound shoot(s) made pending again");
    }
    report_skipped(&landscape, args.evaluated.landscape.strict)?;
    Ok((landscape, before_replay))
}

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
}

/// `--compare OLD_CONFIG`: the shoots the two configurations place differently.
fn compare(
    args: &SimulateArgs,
    landscape: &Landscape,
    old: &Side,
    new_side: &simulate::Side<'_>,
    now: DateTime<Utc>,
) -> ExitCode {
    let old_profile = match old.chain.select(now) {
        Selection::Profile { profile, .. } => profile,
        Selection::Deferred { reason, .. } => {
            let text = format!(
                "Scheduling deferred under the old configuration at {}: {reason}. Nothing to compare.",
                rfc3339(now)
            );
            return write_deferred(args.evaluated.output, &text, &reason.to_string(), None);
        }
    };
    let old_regions = Regions::with_overrides(&old.cfg.schedulers.shoot.regions);
    let old_side = simulate::Side {
        label: "old",
        profile: old_profile,
        scheduler_names: &old.cfg.schedulers.shoot.scheduler_names,
        regions: &old_regions,
    };
    let comparison = simulate::compare(landscape, &old_side, new_side, now);
    write_output(args.evaluated.output, |mut out| {
        match args.evaluated.output {
            Output::Json => simulate::write_compare_json(&mut out, &comparison),
            Output::Html => out.write_all(
                report::render_comparison(
                    &comparison,
                    &old_profile.name,
                    &new_side.profile.name,
                    now,
                    args.replay,
                )
                .map_err(std::io::Error::other)?
                .as_bytes(),
            ),
            _ => simulate::write_compare_table(&mut out, &comparison),
        }
    })
}

/// Warnings about the landscape as the decisions see it, once.
fn warn_about_snapshot(snapshot: &Snapshot) {
    for w in snapshot.region_config_conflicts() {
        say!("warning: {w}");
    }
    // A forecast that does not parse counts as no forecast (neutral score): say so at load.
    for source in snapshot.carbon_sources().iter() {
        for payload in source.data.payloads.values() {
            if let Err(e) = payload {
                say!(
                    "warning: carbon-intensity ConfigMap {}: {e}; the locations it would serve score neutral (50)",
                    source.data.name
                );
            }
        }
    }
}

/// `--explain NAMESPACE/NAME`: every seed for one shoot, best first.
fn explain(landscape: &Landscape, mut decisions: simulate::Simulator<'_>, key: &str) -> Outcome {
    // Later decisions cannot change this one: stop once it is made.
    match decisions.find(|o| o.shoot == key) {
        Some(o) => Ok(write_stdout_text(|out| {
            let defaults = landscape.default_notes(&o.shoot);
            out.write_all(
                simulate::render_explain_with_defaults(&o.shoot, &o.result, &defaults).as_bytes(),
            )
        })),
        None => Err(Failure::bad_input(format!(
            "--explain {key}: no pending shoot with that namespace/name in the manifests"
        ))),
    }
}

/// Every pending shoot's decision, in the format asked for.
fn decide(
    args: &SimulateArgs,
    landscape: &Landscape,
    side: &simulate::Side<'_>,
    now: DateTime<Utc>,
    first: simulate::Simulator<'_>,
    before_replay: Option<Snapshot>,
) -> ExitCode {
    let mut first = Some(first);
    let mut run = || {
        first.take().unwrap_or_else(|| {
            simulate::Simulator::new(
                landscape,
                side.profile,
                side.scheduler_names,
                side.regions,
                now,
            )
        })
    };
    write_output(args.evaluated.output, |mut out| {
        match args.evaluated.output {
            Output::Table => simulate::write_table(&mut out, run(), &landscape.skipped),
            Output::Json => simulate::write_json(&mut out, &mut run, &landscape.skipped),
            Output::Yaml => simulate::write_yaml(&mut out, landscape, run()),
            Output::Html => {
                // The report shows every seed's utilisation after all decisions: it needs them all.
                let sim = simulate::simulate(
                    landscape,
                    side.profile,
                    side.scheduler_names,
                    side.regions,
                    now,
                );
                let text = report::render_simulation(
                    landscape,
                    &sim,
                    side.profile,
                    now,
                    before_replay.as_ref(),
                )
                .map_err(std::io::Error::other)?;
                out.write_all(text.as_bytes())
            }
        }
    })
}

/// "Scheduling deferred" in the format asked for: a JSON object, a YAML comment, an HTML page,
/// or the line of text, so that what is redirected into a file is of its kind.
fn write_deferred(
    output: Output,
    text: &str,
    reason: &str,
    retry_at: Option<DateTime<Utc>>,
) -> ExitCode {
    if let Output::Table = output {
        return write_stdout_text(|out| writeln!(out, "{text}"));
    }
    write_stdout(|out| match output {
        Output::Table => writeln!(out, "{text}"),
        Output::Json => {
            let v = serde_json::json!({
                "deferred": true,
                "reason": reason,
                "nextChange": retry_at.map(rfc3339),
                "message": text,
            });
            writeln!(
                out,
                "{}",
                serde_json::to_string_pretty(&v).map_err(std::io::Error::other)?
            )
        }
        Output::Yaml => {
            let line: String = text
                .chars()
                .map(|c| if c.is_control() { ' ' } else { c })
                .collect();
            writeln!(out, "# {line}")
        }
        Output::Html => out.write_all(
            report::render_message("Scheduling deferred", text)
                .map_err(std::io::Error::other)?
                .as_bytes(),
        ),
    })
}

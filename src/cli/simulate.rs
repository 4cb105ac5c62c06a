//! `gardener-scheduler simulate`: decide offline (or on the live landscape, read-only).

use std::process::ExitCode;

use chrono::Utc;

use gardener_scheduler::chain::{Selection, TimelineStep};
use gardener_scheduler::compile::Compiled;
use gardener_scheduler::plan;
use gardener_scheduler::regions::Regions;
use gardener_scheduler::simulate;

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
    let Compiled {
        config: cfg, chain, ..
    } = match load_offline(args.config.as_ref(), args.strict) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    if args.compare.is_some() && matches!(args.output, Output::Yaml) {
        say!("error: --compare: -o yaml is not available; use -o table or -o json");
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    let old = match &args.compare {
        Some(path) => match load_offline_as(
            &format!("--compare {}: ", path.display()),
            Some(path),
            args.strict,
        ) {
            Ok(loaded) => Some((loaded.config, loaded.chain)),
            Err(code) => return code,
        },
        None => None,
    };
    // `-o yaml` reproduces every shoot's document; the other outputs do not need them.
    let documents = matches!(args.output, Output::Yaml);
    let mut chains = vec![&*chain];
    chains.extend(old.as_ref().map(|(_, c)| &**c));
    let mut landscape = match load_landscape(&args.source, &cfg, &chains, documents, "simulated") {
        Ok(l) => l,
        Err(code) => return code,
    };
    // The HTML report of a replay shows each seed's load as bound before the replay.
    let before_replay = (args.replay && matches!(args.output, Output::Html))
        .then(|| simulate::snapshot_of(&landscape));
    if args.replay {
        let mut names = cfg.schedulers.shoot.scheduler_names.clone();
        if let Some((old_cfg, _)) = &old {
            names.extend(old_cfg.schedulers.shoot.scheduler_names.iter().cloned());
        }
        let n = simulate::make_pending(&mut landscape, &names);
        say!("replay: {n} bound shoot(s) made pending again");
    }
    if let Err(code) = report_skipped(&landscape, args.strict) {
        return code;
    }
    if let Some((from, to)) = args.timeline {
        return write_stdout_text(|out| {
            let mut changes = 0;
            for step in chain.timeline_steps(from, to) {
                match step {
                    TimelineStep::Change(at, entry) => {
                        changes += 1;
                        writeln!(
                            out,
                            "{}  {}",
                            at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                            entry
                                .as_deref()
                                .unwrap_or("- (no profile active: scheduling deferred)")
                        )?;
                    }
                    TimelineStep::Truncated(at) => writeln!(
                        out,
                        "... truncated: the timeline stops at {} after {changes} changes; ask for a shorter range",
                        at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                    )?,
                }
                // Each line as soon as it is known: a long range shows progress.
                out.flush()?;
            }
            Ok(())
        });
    }
    let now = args.now.unwrap_or_else(Utc::now);
    let profile = match chain.select(now) {
        Selection::Profile { profile, .. } => profile,
        Selection::Deferred { reason, retry_at } => {
            let next = retry_at
                .map(|t| {
                    format!(
                        "; next change at {}",
                        t.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                    )
                })
                .unwrap_or_default();
            return write_stdout_text(|out| {
                writeln!(
                    out,
                    "Scheduling deferred at {}: {reason}{next}. Pending shoots stay pending.",
                    now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                )
            });
        }
    };
    let names = &cfg.schedulers.shoot.scheduler_names;
    let regions = Regions::with_overrides(&cfg.schedulers.shoot.regions);
    if let Some((old_cfg, old_chain)) = &old {
        let old_profile = match old_chain.select(now) {
            Selection::Profile { profile, .. } => profile,
            Selection::Deferred { reason, .. } => {
                return write_stdout_text(|out| {
                    writeln!(
                        out,
                        "Scheduling deferred under the old configuration at {}: {reason}. Nothing to compare.",
                        now.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
                    )
                });
            }
        };
        let old_regions = Regions::with_overrides(&old_cfg.schedulers.shoot.regions);
        let old_side = simulate::Side {
            label: "old",
            profile: old_profile,
            scheduler_names: &old_cfg.schedulers.shoot.scheduler_names,
            regions: &old_regions,
        };
        let new_side = simulate::Side {
            label: "new",
            profile,
            scheduler_names: names,
            regions: &regions,
        };
        let comparison = simulate::compare(&landscape, &old_side, &new_side, now);
        return write_output(args.output, |mut out| match args.output {
            Output::Json => simulate::write_compare_json(&mut out, &comparison),
            Output::Html => out.write_all(
                plan::html::render_comparison(
                    &comparison,
                    &old_profile.name,
                    &profile.name,
                    now,
                    args.replay,
                )
                .as_bytes(),
            ),
            _ => simulate::write_compare_table(&mut out, &comparison),
        });
    }
    let new_run = || simulate::Simulator::new(&landscape, profile, names, &regions, now);
    let first = new_run();
    for w in first.snapshot().region_config_conflicts() {
        say!("warning: {w}");
    }
    // A forecast that does not parse counts as no forecast (neutral score): say so at load.
    for source in first.snapshot().carbon_sources().iter() {
        for payload in source.data.payloads.values() {
            if let Err(e) = payload {
                say!(
                    "warning: carbon-intensity ConfigMap {}: {e}; the locations it would serve score neutral (50)",
                    source.data.name
                );
            }
        }
    }
    let mut first = Some(first);
    let mut run = || first.take().unwrap_or_else(new_run);
    if let Some(key) = args.explain {
        // Later decisions cannot change this one: stop once it is made.
        return match run().find(|o| o.shoot == key) {
            Some(o) => write_stdout_text(|out| {
                out.write_all(simulate::render_explain(&o.shoot, &o.result).as_bytes())
            }),
            None => {
                say!(
                    "error: --explain {key}: no pending shoot with that namespace/name in the manifests"
                );
                ExitCode::from(EXIT_BAD_INPUT)
            }
        };
    }
    write_output(args.output, |mut out| match args.output {
        Output::Table => simulate::write_table(&mut out, run(), &landscape.skipped),
        Output::Json => simulate::write_json(&mut out, &mut run, &landscape.skipped),
        Output::Yaml => simulate::write_yaml(&mut out, &landscape, run()),
        Output::Html => {
            // The report shows every seed's utilisation after all decisions: it needs them all.
            let sim = simulate::simulate(&landscape, profile, names, &regions, now);
            let text = plan::html::render_simulation(
                &landscape,
                &sim,
                profile,
                now,
                before_replay.as_ref(),
            );
            out.write_all(text.as_bytes())
        }
    })
}

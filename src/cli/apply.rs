//! `gardener-scheduler plan apply FILE`: a saved plan carried out against the garden cluster.

use std::io::{IsTerminal, Write};
use std::process::ExitCode;

use chrono::{DateTime, SecondsFormat, Utc};

use gardener_scheduler::apply::{self, Step, pace, pace::Counts, pace::State};
use gardener_scheduler::compile::Compiled;
use gardener_scheduler::controller::{default_identity, shutdown_signal};
use gardener_scheduler::plugin::ClusterData;
use gardener_scheduler::regions::Regions;
use gardener_scheduler::simulate;

use super::args::*;
use super::common::*;

pub(crate) fn apply_cmd(args: ApplyArgs) -> ExitCode {
    // What goes wrong and is tried again (a shoot that cannot be read, a landscape read that
    // failed) is said on stderr as it happens.
    let _ = tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_max_level(tracing::Level::WARN)
        .with_ansi(false)
        .with_target(false)
        .try_init();
    finish(run(&args))
}

fn ts(t: &DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// A plan from its file, read before anything else; a published one once connected.
fn load_file(args: &ApplyArgs) -> Result<Option<apply::SavedPlan>, Failure> {
    let Some(file) = &args.file else {
        return Ok(None);
    };
    let plan = apply::load(file).map_err(|e| Failure::bad_input(e.to_string()))?;
    checked_clock(args, &file.display().to_string(), plan).map(Some)
}

fn checked_clock(
    args: &ApplyArgs,
    label: &str,
    plan: apply::SavedPlan,
) -> Result<apply::SavedPlan, Failure> {
    apply::check_clock(label, &plan, args.now.unwrap_or_else(Utc::now))
        .map_err(|e| Failure::bad_input(e.to_string()))?;
    Ok(plan)
}

/// The plan published in ConfigMap `namespace/name`.
async fn load_published(
    args: &ApplyArgs,
    client: &kube::Client,
    (namespace, name): &(String, String),
) -> Result<apply::SavedPlan, Failure> {
    use apply::published::{self, PublishedError};
    let text = published::read(client, namespace, name)
        .await
        .map_err(|e| match e {
            PublishedError::Read { .. } => Failure::failed(e.to_string()),
            e => Failure::bad_input(e.to_string()),
        })?;
    let label = published::label(namespace, name);
    let plan = apply::parse(&label, &text).map_err(|e| Failure::bad_input(e.to_string()))?;
    checked_clock(args, &label, plan)
}

fn run(args: &ApplyArgs) -> Outcome {
    let file_plan = load_file(args)?;
    let Compiled {
        config: cfg, chain, ..
    } = load_offline(args.config.as_ref(), args.strict)?;
    let kubeconfig = kubeconfig_of(args.kubeconfig.as_ref(), &cfg);
    let data: Vec<ClusterData> = chain.cluster_data();
    let regions = Regions::with_overrides(&cfg.schedulers.shoot.regions);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::failed(format!("starting the async runtime: {e}")))?;
    let base = (args.now, std::time::Instant::now());
    let clock = move || match base.0 {
        Some(t) => t + chrono::Duration::from_std(base.1.elapsed()).unwrap_or_default(),
        None => Utc::now(),
    };
    let mut sink: Box<dyn apply::Sink> = match args.output {
        ApplyOutput::Json => Box::new(JsonSink),
        ApplyOutput::Table => Box::new(TextSink {
            terminal: std::io::stderr().is_terminal(),
            dry_run: args.dry_run,
        }),
    };
    let outcome = runtime.block_on(async {
        let simulate::Connected { client, server } =
            connect(&kubeconfig, &cfg, args.request_timeout).await?;
        let plan = match file_plan {
            Some(plan) => plan,
            None => {
                let at = args.from_configmap.as_ref().expect("a file or a ConfigMap");
                load_published(args, &client, at).await?
            }
        };
        let settings = apply::Settings {
            limits: pace::Limits {
                max_concurrent: args
                    .max_concurrent
                    .map_or(plan.max_concurrent, |k| k as usize),
                max_failures: args.max_failures as usize,
                move_duration: plan.move_duration,
            },
            move_timeout: chrono::Duration::from_std(args.move_timeout)
                .unwrap_or(chrono::Duration::MAX),
            poll: args.poll_interval,
            request_timeout: args.request_timeout,
            chunk_size: args.chunk_size,
            dry_run: args.dry_run,
            force: args.force,
            lease: apply::cluster::LeaseRef {
                namespace: args.lease.0.clone(),
                name: args.lease.1.clone(),
                holder: format!("{}_{}", default_identity(), std::process::id()),
                duration: args.lease_duration,
            },
        };
        let (stop_tx, stop) = tokio::sync::watch::channel(false);
        tokio::spawn(async move {
            shutdown_signal().await;
            say!("stopping: no more moves start; the ones in flight are followed to their end (again to exit now)");
            let _ = stop_tx.send(true);
            shutdown_signal().await;
            std::process::exit(130);
        });
        let env = apply::Env {
            client: &client,
            chain: &chain,
            scheduler_names: &cfg.schedulers.shoot.scheduler_names,
            regions: &regions,
            data: &data,
            clock: &clock,
            stop,
        };
        apply::apply(&env, &plan, &settings, sink.as_mut())
            .await
            .map_err(|e| match e {
                apply::ApplyError::Foreign(_) => Failure::bad_input(e.to_string()),
                apply::ApplyError::Lease(apply::cluster::WriteError::Unreachable { .. })
                | apply::ApplyError::ReadLandscape(simulate::LiveError::Unreachable { .. }) => {
                    Failure::failed(format!("{e} (API server {server})"))
                }
                e => Failure::failed(e.to_string()),
            }
            .and("no move was started by this apply"))
    });
    runtime.shutdown_background();
    if args.output == ApplyOutput::Table && std::io::stderr().is_terminal() {
        eprint!("\r\x1b[K");
    }
    let summary = outcome?;
    let failed = summary.counts.failed;
    let code = match args.output {
        ApplyOutput::Json => write_stdout(|out| {
            let v = serde_json::json!({
                "step": "summary",
                "time": ts(&clock()),
                "dryRun": args.dry_run,
                "counts": summary.counts,
                "wouldStart": summary.would_start,
                "moves": summary.states.iter().map(|(shoot, state)| {
                    serde_json::json!({"shoot": shoot, "result": state})
                }).collect::<Vec<_>>(),
            });
            writeln!(out, "{v}")
        }),
        ApplyOutput::Table => write_stdout_text(|out| write_summary(out, &summary, args.dry_run)),
    };
    if code != ExitCode::SUCCESS {
        return Ok(code);
    }
    if let Some(why) = &summary.stopped {
        say!("the apply stopped before its plan was carried out: {why}");
    }
    Ok(if failed > 0 || summary.stopped.is_some() {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

fn write_summary(out: &mut dyn Write, s: &apply::Summary, dry_run: bool) -> std::io::Result<()> {
    let c = &s.counts;
    writeln!(out)?;
    if dry_run {
        writeln!(
            out,
            "Dry run: {} of {} move(s) would start; nothing was written.",
            s.would_start, c.total
        )?;
    }
    writeln!(
        out,
        "{} move(s): {} done, {} in flight, {} not started, {} skipped, {} failed.",
        c.total, c.done, c.in_flight, c.waiting, c.skipped, c.failed
    )?;
    for (shoot, state) in &s.states {
        match state {
            State::Skipped { reason } => writeln!(out, "  skipped {shoot}: {reason}")?,
            State::Failed { reason } => writeln!(out, "  FAILED  {shoot}: {reason}")?,
            State::InFlight { .. } => writeln!(out, "  in flight {shoot}")?,
            State::Waiting if !dry_run => writeln!(out, "  not started {shoot}")?,
            _ => {}
        }
    }
    Ok(())
}

/// One JSON object per step on stdout.
struct JsonSink;

impl apply::Sink for JsonSink {
    fn step(&mut self, at: DateTime<Utc>, step: &Step) {
        let mut v = serde_json::to_value(step).unwrap_or_default();
        if let Some(map) = v.as_object_mut() {
            map.insert("time".into(), ts(&at).into());
        }
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "{v}").and_then(|()| out.flush());
    }
    fn progress(&mut self, _: DateTime<Utc>, _: &Counts) {}
}

/// A line per step on stdout; on a terminal, a progress line on stderr.
struct TextSink {
    terminal: bool,
    dry_run: bool,
}

impl apply::Sink for TextSink {
    fn step(&mut self, at: DateTime<Utc>, step: &Step) {
        let kind = |live: bool| if live { "live" } else { "classic" };
        let line = match step {
            Step::Found { shoot, state } => format!("found    {shoot}: {}", describe(state)),
            Step::Started {
                shoot,
                from,
                to,
                live,
            } => format!("started  {shoot} {from} -> {to} ({})", kind(*live)),
            Step::WouldStart {
                shoot,
                from,
                to,
                live,
                start,
            } => format!(
                "would start {shoot} {from} -> {to} ({}) at {}",
                kind(*live),
                ts(start)
            ),
            Step::Conflict { shoot, attempt } => {
                format!("conflict {shoot}: changed meanwhile; read and checked again ({attempt})")
            }
            Step::Done { shoot, to } => format!("done     {shoot} on {to}"),
            Step::Skipped { shoot, reason } => format!("skipped  {shoot}: {reason}"),
            Step::Failed {
                shoot,
                reason,
                last_operation,
            } if reason.contains(last_operation.as_str()) => format!("FAILED   {shoot}: {reason}"),
            Step::Failed {
                shoot,
                reason,
                last_operation,
            } => format!("FAILED   {shoot}: {reason} (last operation: {last_operation})"),
            Step::Frozen { reason } => format!("frozen   no move starts: {reason}"),
            Step::Stopping { reason } => format!("stopping {reason}"),
            Step::Note { message } => format!("note     {message}"),
        };
        if self.terminal {
            eprint!("\r\x1b[K");
        }
        let text = format!("{} {line}\n", ts(&at));
        let mut out = std::io::stdout().lock();
        let _ = out
            .write_all(gardener_scheduler::escape::text(&text).as_bytes())
            .and_then(|()| out.flush());
    }
    fn progress(&mut self, _: DateTime<Utc>, c: &Counts) {
        if !self.terminal || self.dry_run {
            return;
        }
        let next = c
            .next_start
            .map(|t| format!(", next start {}", ts(&t)))
            .unwrap_or_default();
        eprint!(
            "\r{}/{} done, {} in flight, {} waiting ({} for their window), {} skipped, {} failed{next}\x1b[K",
            c.done, c.total, c.in_flight, c.waiting, c.waiting_for_window, c.skipped, c.failed
        );
    }
}

fn describe(state: &State) -> String {
    match state {
        State::Waiting => "waiting".into(),
        State::InFlight { .. } => "migration under way; following it".into(),
        State::Done => "already on its destination".into(),
        State::Skipped { reason } => format!("skipped: {reason}"),
        State::Failed { reason } => format!("failed: {reason}"),
    }
}

//! The `gardener-scheduler` command: `run` (the default) and `simulate`.
#![forbid(unsafe_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use chrono::{DateTime, Utc};
use clap::{Args, Parser, Subcommand, ValueEnum};

use gardener_scheduler::chain::{ProfileChain, Selection, TimelineStep};
use gardener_scheduler::compile::{self, Compiled};
use gardener_scheduler::config::{self, SchedulerConfiguration};
use gardener_scheduler::controller;
use gardener_scheduler::plan;
use gardener_scheduler::plugin::ClusterData;
use gardener_scheduler::regions::Regions;
use gardener_scheduler::simulate::{self, Landscape};

/// Exit status for bad input or configuration.
const EXIT_BAD_INPUT: u8 = 2;
/// Exit status when the reader of the output went away (a closed pipe), as a shell reports a
/// process ended by SIGPIPE: `simulate ... | head` ends quietly.
const EXIT_CLOSED_PIPE: u8 = 141;

#[derive(Parser)]
#[command(
    name = "gardener-scheduler",
    version,
    about = "Places Gardener Shoot control planes onto Seed clusters"
)]
#[command(args_conflicts_with_subcommands = true)]
struct Cli {
    #[command(subcommand)]
    command: Option<Command>,
    #[command(flatten)]
    run: RunArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Run the scheduler against the API server (the default).
    Run(RunArgs),
    /// Decide offline where the pending shoots in manifest files would go, and why.
    Simulate(SimulateArgs),
    /// Plan control-plane moves (drain seeds, rebalance) with start times; applies nothing.
    #[command(subcommand)]
    Plan(PlanCommand),
}

#[derive(Subcommand)]
enum PlanCommand {
    /// Where every shoot on these seeds should move, and which cannot.
    Drain {
        /// Seeds to drain.
        #[arg(value_name = "SEED", required = true)]
        seeds: Vec<String>,
        #[command(flatten)]
        common: PlanArgs,
    },
    /// At most N moves that lower the objective the most.
    Rebalance {
        /// The largest number of moves to plan.
        #[arg(long, value_name = "N")]
        max_moves: usize,
        /// What to lower.
        #[arg(long, value_enum, default_value_t = plan::Objective::Spread)]
        objective: plan::Objective,
        #[command(flatten)]
        common: PlanArgs,
    },
}

#[derive(Args)]
struct PlanArgs {
    /// SchedulerConfiguration file (defaults apply without one).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Treat keys the configuration does not know as errors instead of warnings, and fail (exit
    /// status 2) when any object of the landscape is skipped as malformed, unsupported or
    /// repeated, instead of planning without it.
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    source: SourceArgs,
    /// Plan from this instant (RFC 3339) instead of the current time.
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    now: Option<DateTime<Utc>>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = PlanOutput::Table)]
    output: PlanOutput,
    /// Moves that cannot start within this long after --now are deferred (Go duration).
    #[arg(long, value_name = "DURATION", default_value = "168h", value_parser = parse_duration)]
    horizon: std::time::Duration,
    /// At most this many moves overlap on any one source or destination seed.
    #[arg(long, value_name = "K", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    max_concurrent: u32,
    /// How long one move is assumed to take (Go duration).
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = parse_duration)]
    move_duration: std::time::Duration,
}

#[derive(Clone, Copy, ValueEnum)]
enum PlanOutput {
    Table,
    Json,
    Yaml,
    Html,
}

fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let d = gardener_scheduler::go_duration::parse(s).map_err(|e| format!("{s:?}: {e}"))?;
    if d.is_zero() {
        return Err(format!("{s:?}: must be positive"));
    }
    Ok(d)
}

#[derive(Args, Clone, Default)]
struct RunArgs {
    /// SchedulerConfiguration file.
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Kubeconfig file (overrides clientConnection.kubeconfig and $KUBECONFIG).
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// Load and validate the configuration, print it, and exit.
    #[arg(long)]
    validate_only: bool,
    /// Treat keys the configuration does not know as errors (upstream ignores them; so do we,
    /// with a warning each).
    #[arg(long)]
    strict: bool,
}

/// Where a command reads its landscape: manifest files, or the cluster with files laid over it.
#[derive(Args)]
struct SourceArgs {
    /// Manifest files or directories (multi-document YAML). With --live, they are laid over the
    /// cluster's objects: same kind, namespace and name replaces, anything else is added.
    #[arg(
        short = 'f',
        long = "filename",
        value_name = "PATH",
        required_unless_present_any = ["live", "kubeconfig"]
    )]
    files: Vec<PathBuf>,
    /// Read the landscape from the cluster (read-only): kubeconfig from --kubeconfig, else
    /// clientConnection.kubeconfig of --config, else $KUBECONFIG, ~/.kube/config or in-cluster.
    #[arg(long)]
    live: bool,
    /// Kubeconfig of the cluster to read the landscape from; implies --live.
    #[arg(long, value_name = "FILE")]
    kubeconfig: Option<PathBuf>,
    /// With --live: objects per list request (each kind is listed in pages of this size).
    #[arg(long, value_name = "N", default_value_t = simulate::PAGE_SIZE,
          value_parser = clap::value_parser!(u32).range(1..))]
    chunk_size: u32,
}

#[derive(Args)]
struct SimulateArgs {
    /// SchedulerConfiguration file (defaults apply without one).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Treat keys the configuration does not know as errors instead of warnings, and fail (exit
    /// status 2) when any manifest object is skipped as malformed, unsupported or repeated,
    /// instead of scheduling the rest.
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    source: SourceArgs,
    /// Decide with --config (new) and with this configuration (old) over the same landscape;
    /// print the shoots placed differently, then a summary of each configuration.
    #[arg(long, value_name = "OLD_CONFIG", conflicts_with_all = ["explain", "timeline"])]
    compare: Option<PathBuf>,
    /// Decide every shoot again as if it were pending (seedName cleared on every shoot this
    /// scheduler would schedule), in creation order, each placement counting for the next.
    #[arg(long)]
    replay: bool,
    /// Evaluate at this instant (RFC 3339) instead of the current time.
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    now: Option<DateTime<Utc>>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Output::Table)]
    output: Output,
    /// Explain the decision for one shoot (namespace/name): every seed, best first.
    #[arg(long, value_name = "NAMESPACE/NAME")]
    explain: Option<String>,
    /// Print which profile entry is active when over FROM..TO (RFC 3339), one line per change.
    #[arg(long, value_name = "FROM..TO", value_parser = parse_range)]
    timeline: Option<(DateTime<Utc>, DateTime<Utc>)>,
}

#[derive(Clone, Copy, ValueEnum)]
enum Output {
    Table,
    Json,
    Yaml,
    Html,
}

fn parse_time(s: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.to_utc())
        .map_err(|e| format!("{s:?} is not an RFC 3339 timestamp: {e}"))
}

fn parse_range(s: &str) -> Result<(DateTime<Utc>, DateTime<Utc>), String> {
    let (from, to) = s
        .split_once("..")
        .ok_or_else(|| format!("{s:?}: expected FROM..TO"))?;
    let (from, to) = (parse_time(from)?, parse_time(to)?);
    if to <= from {
        return Err(format!("{s:?}: TO must be after FROM"));
    }
    Ok((from, to))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Simulate(args)) => simulate_cmd(args),
        Some(Command::Run(args)) => run_cmd(args),
        Some(Command::Plan(cmd)) => plan_cmd(cmd),
        None => run_cmd(cli.run),
    }
}

fn load_config(path: Option<&PathBuf>, strict: bool) -> Result<Compiled, ExitCode> {
    let unknown = if strict {
        config::UnknownKeys::Reject
    } else {
        config::UnknownKeys::Warn
    };
    compile::load_with(path.map(PathBuf::as_path), unknown).map_err(|e| {
        eprintln!("error: {e}");
        ExitCode::from(EXIT_BAD_INPUT)
    })
}

/// For commands that print to the terminal: one line per ignored key.
fn print_warnings(warnings: &[config::FieldError]) {
    for w in warnings {
        eprintln!("warning: {w}");
    }
}

/// What `debugging` asks for and what this scheduler does about it, said once at start-up.
fn debugging_notes(cfg: &SchedulerConfiguration) -> Vec<&'static str> {
    let mut notes = Vec::new();
    if cfg.debugging.enable_profiling {
        notes.push(
            "debugging.enableProfiling is set: gardener-scheduler serves no /debug/pprof endpoints \
             (they are Go runtime profiles); profile the process from outside, e.g. with perf",
        );
    }
    if cfg.debugging.enable_contention_profiling {
        notes.push(
            "debugging.enableContentionProfiling is set: it has no effect in gardener-scheduler \
             (Go block profiling has no equivalent here)",
        );
    }
    notes
}

fn run_cmd(args: RunArgs) -> ExitCode {
    let mut compiled = match load_config(args.config.as_ref(), args.strict) {
        Ok(c) => c,
        Err(code) => return code,
    };
    if let Some(k) = &args.kubeconfig {
        compiled.config.client_connection.kubeconfig = k.display().to_string();
    }
    let (cfg, warnings) = (&compiled.config, &compiled.warnings);
    if args.validate_only {
        print_warnings(warnings);
        for note in debugging_notes(cfg) {
            eprintln!("note: {note}");
        }
        return write_stdout(|out| {
            let text = serde_yaml_ng::to_string(cfg).map_err(std::io::Error::other)?;
            out.write_all(text.as_bytes())
        });
    }
    init_logging(cfg);
    for w in warnings {
        tracing::warn!(field = %w.path, "{}", w.message);
    }
    for note in debugging_notes(cfg) {
        tracing::warn!("{note}");
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: starting the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(controller::run_with_signals(compiled)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "gardener-scheduler failed");
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Logs go to stderr in `logFormat` at `logLevel`; `RUST_LOG`, when set, refines the filter.
fn init_logging(cfg: &SchedulerConfiguration) {
    use tracing_subscriber::EnvFilter;
    let level = match cfg.log_level {
        config::LogLevel::Debug => "debug",
        config::LogLevel::Info => "info",
        config::LogLevel::Error => "error",
    };
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(level));
    use std::io::IsTerminal;
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal());
    match cfg.log_format {
        config::LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(true)
            .init(),
        config::LogFormat::Text => builder.init(),
    }
}

/// Runs `write` on buffered stdout. A closed pipe ends the program quietly; any other write
/// error (a full disk) is reported naming the output.
fn write_stdout(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> ExitCode {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    match write(&mut out).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::from(EXIT_CLOSED_PIPE),
        Err(e) => {
            // Whatever is still buffered cannot be written either; drop it without retrying.
            let _ = out.into_parts();
            eprintln!("error: writing the output to stdout: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Loads and compiles a configuration for an offline command (warnings on stderr).
fn load_offline(path: Option<&PathBuf>, strict: bool) -> Result<Compiled, ExitCode> {
    let compiled = load_config(path, strict)?;
    print_warnings(&compiled.warnings);
    Ok(compiled)
}

fn simulate_cmd(args: SimulateArgs) -> ExitCode {
    let Compiled {
        config: cfg, chain, ..
    } = match load_offline(args.config.as_ref(), args.strict) {
        Ok(loaded) => loaded,
        Err(code) => return code,
    };
    if args.compare.is_some() && matches!(args.output, Output::Yaml) {
        eprintln!("error: --compare: -o yaml is not available; use -o table or -o json");
        return ExitCode::from(EXIT_BAD_INPUT);
    }
    let old = match &args.compare {
        Some(path) => match load_offline(Some(path), args.strict) {
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
        eprintln!("replay: {n} bound shoot(s) made pending again");
    }
    if let Err(code) = report_skipped(&landscape, args.strict) {
        return code;
    }
    if let Some((from, to)) = args.timeline {
        return write_stdout(|out| {
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
            return write_stdout(|out| {
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
                return write_stdout(|out| {
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
        return write_stdout(|mut out| match args.output {
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
        eprintln!("warning: {w}");
    }
    // A forecast that does not parse counts as no forecast (neutral score): say so at load.
    for source in first.snapshot().carbon_sources().iter() {
        for payload in source.data.payloads.values() {
            if let Err(e) = payload {
                eprintln!(
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
            Some(o) => write_stdout(|out| {
                out.write_all(simulate::render_explain(&o.shoot, &o.result).as_bytes())
            }),
            None => {
                eprintln!(
                    "error: --explain {key}: no pending shoot with that namespace/name in the manifests"
                );
                ExitCode::from(EXIT_BAD_INPUT)
            }
        };
    }
    write_stdout(|mut out| match args.output {
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

fn plan_cmd(cmd: PlanCommand) -> ExitCode {
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
            eprintln!(
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
            eprintln!("error: {e}");
            return ExitCode::from(EXIT_BAD_INPUT);
        }
    };
    let text = match common.output {
        PlanOutput::Table => plan::output::render_table(&p),
        PlanOutput::Json => plan::output::render_json(&p),
        PlanOutput::Yaml => plan::output::render_yaml(&landscape, &p),
        PlanOutput::Html => plan::html::render(&p),
    };
    write_stdout(|out| out.write_all(text.as_bytes()))
}

/// Names every object the load skipped on stderr: warnings, or with `--strict` errors and exit
/// status 2 (nothing is decided on a landscape missing objects).
fn report_skipped(landscape: &Landscape, strict: bool) -> Result<(), ExitCode> {
    let level = if strict { "error" } else { "warning" };
    for s in &landscape.skipped {
        eprintln!("{level}: skipped {s}");
    }
    if strict && !landscape.skipped.is_empty() {
        eprintln!(
            "error: --strict: {} object(s) of the manifests were skipped",
            landscape.skipped.len()
        );
        return Err(ExitCode::from(EXIT_BAD_INPUT));
    }
    Ok(())
}

/// The landscape to decide on: the manifest files, or the cluster's objects with the files laid
/// over them.
///
/// `documents` keeps every shoot's document (for `-o yaml`, and for plans: the maintenance
/// windows and the binding documents); `what` names what a failed read leaves undone.
fn load_landscape(
    args: &SourceArgs,
    cfg: &SchedulerConfiguration,
    chains: &[&ProfileChain],
    documents: bool,
    what: &str,
) -> Result<Landscape, ExitCode> {
    let yaml = documents;
    let load = if yaml {
        Landscape::load_with_documents
    } else {
        Landscape::load
    };
    let files = match load(&args.files) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("error: {e}");
            return Err(ExitCode::from(EXIT_BAD_INPUT));
        }
    };
    if !args.live && args.kubeconfig.is_none() {
        return Ok(files);
    }
    let kubeconfig = args
        .kubeconfig
        .as_ref()
        .map(|k| k.display().to_string())
        .unwrap_or_else(|| cfg.client_connection.kubeconfig.clone());
    // What the profiles of every configuration in play declare they read.
    let data: Vec<ClusterData> = chains.iter().flat_map(|c| c.cluster_data()).collect();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: starting the async runtime: {e}");
            return Err(ExitCode::FAILURE);
        }
    };
    let cc = &cfg.client_connection;
    let read = runtime.block_on(async {
        let client = controller::client_from_kubeconfig(
            &kubeconfig,
            cc.qps,
            cc.burst,
            &controller::RestClientMetrics::default(),
        )
        .await
        .map_err(|e| {
            eprintln!("error: {e}");
            ExitCode::from(EXIT_BAD_INPUT)
        })?;
        let mut progress = progress_printer();
        simulate::read_live(&client, args.chunk_size, &data, yaml, &mut progress)
            .await
            .map_err(|e| {
                eprintln!("error: {e}");
                eprintln!("error: the landscape could not be read completely; nothing was {what}");
                ExitCode::FAILURE
            })
    })?;
    for w in &read.warnings {
        eprintln!("warning: {w}");
    }
    let mut landscape = read.landscape;
    for r in landscape.overlay(files) {
        eprintln!("overlay: -f replaces {r} of the cluster");
    }
    Ok(landscape)
}

/// Progress of the live read on stderr, only when stderr is a terminal: one line per kind,
/// rewritten as pages arrive.
fn progress_printer() -> impl FnMut(simulate::Progress<'_>) {
    use std::io::IsTerminal;
    let terminal = std::io::stderr().is_terminal();
    move |p: simulate::Progress<'_>| {
        if !terminal {
            return;
        }
        if p.done {
            eprintln!("\rread {}: {}\x1b[K", p.what, p.objects);
        } else {
            eprint!("\rreading {}: {}...\x1b[K", p.what, p.objects);
        }
    }
}

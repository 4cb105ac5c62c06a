//! The command line: subcommands, flags and their parsers.

use std::path::PathBuf;

use chrono::{DateTime, Utc};
use clap::{Args, Parser, Subcommand, ValueEnum};

use gardener_scheduler::plan;
use gardener_scheduler::simulate;

#[derive(Parser)]
#[command(
    name = "gardener-scheduler",
    version,
    about = "Places Gardener Shoot control planes onto Seed clusters"
)]
#[command(args_conflicts_with_subcommands = true)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
    #[command(flatten)]
    pub(crate) run: RunArgs,
}

#[derive(Subcommand)]
pub(crate) enum Command {
    /// Run the scheduler against the API server (the default).
    Run(RunArgs),
    /// Decide offline where the pending shoots in manifest files would go, and why.
    Simulate(SimulateArgs),
    /// Plan control-plane moves (drain seeds, rebalance) with start times; applies nothing.
    #[command(subcommand)]
    Plan(PlanCommand),
}

#[derive(Subcommand)]
pub(crate) enum PlanCommand {
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
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
        max_moves: u32,
        /// What to lower.
        #[arg(long, value_enum, default_value_t = plan::Objective::Spread)]
        objective: plan::Objective,
        /// Fail (exit status 1, no plan) when the search has not finished after this long
        /// (Go duration).
        #[arg(long, value_name = "DURATION", default_value = "10m", value_parser = parse_duration)]
        timeout: std::time::Duration,
        #[command(flatten)]
        common: PlanArgs,
    },
}

#[derive(Args)]
pub(crate) struct PlanArgs {
    /// SchedulerConfiguration file (defaults apply without one).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Treat keys the configuration does not know as errors instead of warnings, and fail (exit
    /// status 2) when any object of the landscape is skipped as malformed, unsupported or
    /// repeated, instead of planning without it.
    #[arg(long)]
    pub(crate) strict: bool,
    #[command(flatten)]
    pub(crate) source: SourceArgs,
    /// Plan from this instant (RFC 3339) instead of the current time.
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    pub(crate) now: Option<DateTime<Utc>>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = PlanOutput::Table)]
    pub(crate) output: PlanOutput,
    /// Moves that cannot start within this long after --now are deferred (Go duration).
    #[arg(long, value_name = "DURATION", default_value = "168h", value_parser = parse_duration)]
    pub(crate) horizon: std::time::Duration,
    /// At most this many moves overlap on any one source or destination seed.
    #[arg(long, value_name = "K", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_concurrent: u32,
    /// Explain every move with every seed (scores and rejections, as `simulate --explain`);
    /// without it, a move's explanation lists the best 10 seeds and counts the rejections.
    #[arg(long)]
    pub(crate) explain: bool,
    /// How long one move is assumed to take (Go duration).
    #[arg(long, value_name = "DURATION", default_value = "30m", value_parser = parse_duration)]
    pub(crate) move_duration: std::time::Duration,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum PlanOutput {
    Table,
    Json,
    Yaml,
    Html,
}

pub(crate) fn parse_duration(s: &str) -> Result<std::time::Duration, String> {
    let d = gardener_scheduler::go_duration::parse(s).map_err(|e| format!("{s:?}: {e}"))?;
    if d.is_zero() {
        return Err(format!("{s:?}: must be positive"));
    }
    Ok(d)
}

#[derive(Args, Clone, Default)]
pub(crate) struct RunArgs {
    /// SchedulerConfiguration file.
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Kubeconfig file (overrides clientConnection.kubeconfig and $KUBECONFIG).
    #[arg(long, value_name = "FILE")]
    pub(crate) kubeconfig: Option<PathBuf>,
    /// Load and validate the configuration, print it, and exit.
    #[arg(long)]
    pub(crate) validate_only: bool,
    /// Treat keys the configuration does not know as errors (upstream ignores them; so do we,
    /// with a warning each).
    #[arg(long)]
    pub(crate) strict: bool,
}

/// Where a command reads its landscape: manifest files, or the cluster with files laid over it.
#[derive(Args)]
pub(crate) struct SourceArgs {
    /// Manifest files or directories (multi-document YAML). With --live, they are laid over the
    /// cluster's objects: same kind, namespace and name replaces, anything else is added.
    #[arg(
        short = 'f',
        long = "filename",
        value_name = "PATH",
        required_unless_present_any = ["live", "kubeconfig"]
    )]
    pub(crate) files: Vec<PathBuf>,
    /// Read the landscape from the cluster (read-only): kubeconfig from --kubeconfig, else
    /// clientConnection.kubeconfig of --config, else $KUBECONFIG, ~/.kube/config or in-cluster.
    #[arg(long)]
    pub(crate) live: bool,
    /// Kubeconfig of the cluster to read the landscape from; implies --live.
    #[arg(long, value_name = "FILE")]
    pub(crate) kubeconfig: Option<PathBuf>,
    /// With --live: objects per list request (each kind is listed in pages of this size).
    #[arg(long, value_name = "N", default_value_t = simulate::PAGE_SIZE,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) chunk_size: u32,
    /// With --live: how long building the client (an exec credential plugin included) and each
    /// list request, its whole answer included, may take (Go duration).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub(crate) request_timeout: std::time::Duration,
}

#[derive(Args)]
pub(crate) struct SimulateArgs {
    /// SchedulerConfiguration file (defaults apply without one).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Treat keys the configuration does not know as errors instead of warnings, and fail (exit
    /// status 2) when any manifest object is skipped as malformed, unsupported or repeated,
    /// instead of scheduling the rest.
    #[arg(long)]
    pub(crate) strict: bool,
    #[command(flatten)]
    pub(crate) source: SourceArgs,
    /// Decide with --config (new) and with this configuration (old) over the same landscape;
    /// print the shoots placed differently, then a summary of each configuration.
    #[arg(long, value_name = "OLD_CONFIG", conflicts_with_all = ["explain", "timeline"])]
    pub(crate) compare: Option<PathBuf>,
    /// Decide every shoot again as if it were pending (seedName cleared on every shoot this
    /// scheduler would schedule), in creation order, each placement counting for the next.
    #[arg(long)]
    pub(crate) replay: bool,
    /// Evaluate at this instant (RFC 3339) instead of the current time.
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    pub(crate) now: Option<DateTime<Utc>>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Output::Table)]
    pub(crate) output: Output,
    /// Explain the decision for one shoot (namespace/name): every seed, best first.
    #[arg(long, value_name = "NAMESPACE/NAME")]
    pub(crate) explain: Option<String>,
    /// Print which profile entry is active when over FROM..TO (RFC 3339), one line per change.
    #[arg(long, value_name = "FROM..TO", value_parser = parse_range)]
    pub(crate) timeline: Option<(DateTime<Utc>, DateTime<Utc>)>,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Output {
    Table,
    Json,
    Yaml,
    Html,
}

pub(crate) fn parse_time(s: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.to_utc())
        .map_err(|e| format!("{s:?} is not an RFC 3339 timestamp: {e}"))
}

pub(crate) fn parse_range(s: &str) -> Result<(DateTime<Utc>, DateTime<Utc>), String> {
    let (from, to) = s
        .split_once("..")
        .ok_or_else(|| format!("{s:?}: expected FROM..TO"))?;
    let (from, to) = (parse_time(from)?, parse_time(to)?);
    if to <= from {
        return Err(format!("{s:?}: TO must be after FROM"));
    }
    Ok((from, to))
}

//! The command line: subcommands, flags and their parsers.

use std::path::PathBuf;
use std::time::Duration;

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
    /// Plan control-plane moves (drain seeds, rebalance) with start times, and carry out a
    /// saved plan (`plan apply`).
    #[command(subcommand)]
    Plan(PlanCommand),
    /// Why one shoot went where it went (its decision record), where it would go now and what
    /// changed; for a pending shoot, why it waits and which seed is nearest. Read-only.
    Explain(ExplainArgs),
    /// Print a completion script for a shell, generated from these commands and flags.
    Completion {
        /// The shell to complete in.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), generated from these commands and flags.
    Man {
        /// A subcommand's page (`run`, `simulate`, `plan`, `explain`, `completion`) instead of the whole
        /// command's.
        #[arg(value_name = "COMMAND")]
        command: Option<String>,
    },
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
    /// Rehearse a seed outage: the evacuation plan the scheduler would publish once the seed
    /// is judged unhealthy, and the fail-back plan once it is healthy again
    /// (`schedulers.shoot.evacuation`, `failback` of --config).
    Outage {
        /// The seed that fails.
        #[arg(value_name = "SEED")]
        seed: String,
        /// When the seed fails and when it is well again (RFC 3339).
        #[arg(long, value_name = "FROM..TO", value_parser = parse_range)]
        during: (DateTime<Utc>, DateTime<Utc>),
        #[command(flatten)]
        common: PlanArgs,
    },
    /// Carry out a saved plan (`-o json`): each move at its start time, inside the shoot's
    /// maintenance window, checked again against the cluster, followed to its end.
    Apply(ApplyArgs),
}

#[derive(Args)]
pub(crate) struct ApplyArgs {
    /// The plan, as `plan drain|rebalance -o json` wrote it.
    #[arg(value_name = "FILE", required_unless_present = "from_configmap")]
    pub(crate) file: Option<PathBuf>,
    /// Read the plan from a ConfigMap instead of a file: one the scheduler published for an
    /// unhealthy seed (seed evacuation), key `plan.json`.
    #[arg(long, value_name = "NAMESPACE/NAME", conflicts_with = "file", value_parser = parse_lease_ref)]
    pub(crate) from_configmap: Option<(String, String)>,
    /// SchedulerConfiguration file: the profiles the moves are checked with and their freezes
    /// (defaults apply without one).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Treat keys the configuration does not know as errors instead of warnings.
    #[arg(long)]
    pub(crate) strict: bool,
    /// Kubeconfig of the garden cluster: else clientConnection.kubeconfig of --config, else
    /// $KUBECONFIG, ~/.kube/config or in-cluster.
    #[arg(long, value_name = "FILE")]
    pub(crate) kubeconfig: Option<PathBuf>,
    /// Migrations in flight at most, in total and on any one source or destination seed
    /// (default: the plan's --max-concurrent).
    #[arg(long, value_name = "K", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_concurrent: Option<u32>,
    /// No move starts once this many have failed; those in flight are followed to their end.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_failures: u32,
    /// A migration that has not ended this long after its binding has failed (Go duration).
    #[arg(long, value_name = "DURATION", default_value = "2h", value_parser = parse_duration)]
    pub(crate) move_timeout: std::time::Duration,
    /// How often the shoots in flight are read (Go duration, 100ms to 10m).
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = parse_poll_interval)]
    pub(crate) poll_interval: std::time::Duration,
    /// Send every write with server-side dry run (dryRun=All) and print what would happen:
    /// every move is checked and its binding sent now, without waiting for its start time.
    #[arg(long)]
    pub(crate) dry_run: bool,
    /// Output: a progress line and text (`table`), or one JSON object per step (`json`).
    #[arg(short = 'o', long = "output", value_enum, default_value_t = ApplyOutput::Table)]
    pub(crate) output: ApplyOutput,
    /// Start the apply's clock at this instant (RFC 3339); it runs at real speed from there.
    /// For rehearsing a plan on a test cluster; start times and windows are read on this clock.
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    pub(crate) now: Option<DateTime<Utc>>,
    /// The Lease that keeps a second apply off the same garden.
    #[arg(long, value_name = "NAMESPACE/NAME", default_value = "garden/gardener-scheduler-plan-apply", value_parser = parse_lease_ref)]
    pub(crate) lease: (String, String),
    /// How long the Lease holds without renewal: a killed apply blocks the next one this long
    /// (Go duration, 3s to 1h; renewed every third of it).
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = parse_lease_duration)]
    pub(crate) lease_duration: std::time::Duration,
    /// How long each request may take (Go duration).
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = parse_duration)]
    pub(crate) request_timeout: std::time::Duration,
    /// Objects per list request when the landscape is read.
    #[arg(long, value_name = "N", default_value_t = simulate::PAGE_SIZE,
          value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) chunk_size: u32,
    /// Apply a plan that looks computed on another garden (see "Applying a plan" in the
    /// planning guide); its moves are still checked one by one.
    #[arg(long)]
    pub(crate) force: bool,
}

/// The bounds of `plan apply --poll-interval`: below, the shoots in flight are read many times
/// a second; above, a finished move waits long to be noticed.
pub(crate) const POLL_INTERVALS: (Duration, Duration) =
    (Duration::from_millis(100), Duration::from_secs(600));
/// The bounds of `plan apply --lease-duration`: below, the Lease is written several times a
/// second; above, a killed apply blocks the next one for hours.
pub(crate) const LEASE_DURATIONS: (Duration, Duration) =
    (Duration::from_secs(3), Duration::from_secs(3600));

fn parse_within(s: &str, (min, max): (Duration, Duration)) -> Result<Duration, String> {
    let d = parse_duration(s)?;
    if d < min || d > max {
        let f = gardener_scheduler::go_duration::format;
        return Err(format!("{s:?}: must be between {} and {}", f(min), f(max)));
    }
    Ok(d)
}

fn parse_poll_interval(s: &str) -> Result<Duration, String> {
    parse_within(s, POLL_INTERVALS)
}

fn parse_lease_duration(s: &str) -> Result<Duration, String> {
    parse_within(s, LEASE_DURATIONS)
}

/// How `plan apply` reports.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ApplyOutput {
    Table,
    Json,
}

pub(crate) fn parse_lease_ref(s: &str) -> Result<(String, String), String> {
    match parse_lease(s)? {
        ExpectedLease::Lease { namespace, name } => Ok((namespace, name)),
        ExpectedLease::None => Err(format!("{s:?}: expected NAMESPACE/NAME")),
    }
}

/// What `simulate` and `plan` evaluate, when, and how they print it.
#[derive(Args)]
pub(crate) struct Evaluated {
    #[command(flatten)]
    pub(crate) landscape: LandscapeArgs,
    /// Evaluate at this instant (RFC 3339) instead of the current time.
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    pub(crate) now: Option<DateTime<Utc>>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = Output::Table)]
    pub(crate) output: Output,
}

#[derive(Args)]
#[command(mut_arg("now", |a| a.help("Plan from this instant (RFC 3339) instead of the current time")))]
pub(crate) struct PlanArgs {
    #[command(flatten)]
    pub(crate) evaluated: Evaluated,
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
    /// gardener-apiserver runs with the LiveControlPlaneMigration feature gate: moves that meet
    /// its prerequisites are planned live (the binding carries
    /// migration.gardener.cloud/live-migrate: "true"); without it every move is classic.
    #[arg(long)]
    pub(crate) live_migration: bool,
    /// With --live-migration, a drain moves a highly available shoot to the best destination
    /// it can reach live rather than a better-ranked one it cannot.
    #[arg(long, requires = "live_migration")]
    pub(crate) prefer_live: bool,
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
    #[command(flatten)]
    pub(crate) expect: Expectations,
}

/// What the installation was made for, checked against the loaded configuration at start: the
/// chart grants a Lease, a binding mode and ConfigMap reads, and opens ports, from its values,
/// also when the configuration comes from a ConfigMap it does not render. A mismatch ends the
/// process at once (exit status 2) instead of failing later on a permission or a probe.
#[derive(Args, Clone, Default)]
#[command(next_help_heading = "Checks against the installation")]
pub(crate) struct Expectations {
    /// The Lease leader election must use, or `none` when leader election must be off.
    #[arg(long, value_name = "NAMESPACE/NAME|none", value_parser = parse_lease)]
    pub(crate) expect_lease: Option<ExpectedLease>,
    /// The port server.healthProbes.port must be.
    #[arg(long, value_name = "PORT")]
    pub(crate) expect_health_port: Option<u16>,
    /// The port server.metrics.port must be.
    #[arg(long, value_name = "PORT")]
    pub(crate) expect_metrics_port: Option<u16>,
    /// The mode schedulers.shoot.bindingMode must be.
    #[arg(long, value_name = "MODE", value_enum)]
    pub(crate) expect_binding_mode: Option<BindingMode>,
    /// Whether a profile must use (true) or none may use (false) the CarbonIntensity priority,
    /// which reads ConfigMaps in every namespace.
    #[arg(long, value_name = "BOOL")]
    pub(crate) expect_carbon_intensity: Option<bool>,
}

/// `--expect-lease`: a Lease, or none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ExpectedLease {
    None,
    Lease { namespace: String, name: String },
}

pub(crate) fn parse_lease(s: &str) -> Result<ExpectedLease, String> {
    if s == "none" {
        return Ok(ExpectedLease::None);
    }
    // As leaderElection.resourceNamespace and resourceName are checked: the API server would
    // refuse anything else, and `..` would change the request's path.
    let (namespace, name) = namespaced_name(s, "NAMESPACE/NAME or none")?;
    Ok(ExpectedLease::Lease {
        namespace: namespace.to_string(),
        name: name.to_string(),
    })
}

/// `--expect-binding-mode`, spelled as schedulers.shoot.bindingMode is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum BindingMode {
    #[value(name = "Binding")]
    Binding,
    #[value(name = "Patch")]
    Patch,
}

/// What `simulate` and `plan` decide on: the configuration, and the landscape from manifest
/// files or from the cluster with files laid over it.
#[derive(Args)]
pub(crate) struct LandscapeArgs {
    /// SchedulerConfiguration file (defaults apply without one).
    #[arg(long, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Treat keys the configuration does not know as errors instead of warnings, and fail (exit
    /// status 2) when any object of the landscape is skipped as malformed, unsupported or
    /// repeated, instead of deciding without it.
    #[arg(long)]
    pub(crate) strict: bool,
    /// Manifest files or directories (multi-document YAML). With --live, they are laid over the
    /// cluster's objects: same kind, namespace and name replaces, anything else is added.
    #[arg(
        short = 'f',
        long = "filename",
        value_name = "PATH",
        required_unless_present_any = ["live", "kubeconfig"]
    )]
    pub(crate) files: Vec<PathBuf>,
    /// Decide on the objects of the files exactly as written, without the defaults
    /// gardener-apiserver applies when it stores them (a protected-seed toleration for shoots
    /// in the garden namespace, `spec.networking`, seed visibility; see the what-if guide).
    #[arg(long)]
    pub(crate) as_written: bool,
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
pub(crate) struct ExplainArgs {
    /// The shoot, as namespace/name.
    #[arg(value_name = "NAMESPACE/NAME", value_parser = parse_shoot_key)]
    pub(crate) shoot: String,
    #[command(flatten)]
    pub(crate) landscape: LandscapeArgs,
    /// Decide again at this instant (RFC 3339) instead of the current time.
    #[arg(long, value_name = "RFC3339", value_parser = parse_time)]
    pub(crate) now: Option<DateTime<Utc>>,
    /// Output format.
    #[arg(short = 'o', long = "output", value_enum, default_value_t = ExplainOutput::Text)]
    pub(crate) output: ExplainOutput,
}

/// How `explain` prints its result.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ExplainOutput {
    Text,
    Json,
    Html,
}

/// `namespace/name`: a namespace as the API server names one (a DNS-1123 label) and a name as
/// it names an object (a DNS-1123 subdomain), checked as `plan apply` checks a Lease's; the
/// value shown escaped in the error.
pub(crate) fn parse_shoot_key(s: &str) -> Result<String, String> {
    namespaced_name(s, "NAMESPACE/NAME")?;
    Ok(s.to_string())
}

/// `s` split at its `/` into a namespace, checked as the API server names one (a DNS-1123
/// label), and a name, checked as it names an object (a DNS-1123 subdomain). Without a `/`, the
/// error says `expected`; every error shows the value escaped.
fn namespaced_name<'a>(s: &'a str, expected: &str) -> Result<(&'a str, &'a str), String> {
    let shown = gardener_scheduler::escape::line(s);
    let Some((namespace, name)) = s.split_once('/') else {
        return Err(format!("\"{shown}\": expected {expected}"));
    };
    gardener_scheduler::names::dns1123_label(namespace)
        .map_err(|e| format!("\"{shown}\": namespace: {e}"))?;
    gardener_scheduler::names::dns1123_subdomain(name)
        .map_err(|e| format!("\"{shown}\": name: {e}"))?;
    Ok((namespace, name))
}

#[cfg(test)]
mod shoot_key_tests {
    use super::parse_shoot_key;

    #[test]
    fn a_shoot_key_is_checked_as_the_api_server_names_objects_and_shown_escaped() {
        assert_eq!(
            parse_shoot_key("garden-dev/a.b-1").unwrap(),
            "garden-dev/a.b-1"
        );
        for (key, says) in [
            ("garden-dev", "expected NAMESPACE/NAME"),
            ("/a", "namespace:"),
            ("garden-dev/", "name:"),
            ("garden-dev/a/b", "name:"),
            ("Garden/a", "namespace:"),
            ("garden-dev/A_b", "name:"),
            ("garden-dev/a\nb", "name:"),
        ] {
            let e = parse_shoot_key(key).unwrap_err();
            assert!(e.contains(says), "{key:?}: {e}");
            assert!(!e.contains('\n'), "{key:?}: {e}");
        }
    }
}

/// How `simulate` and `plan` print their result.
#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum Output {
    Table,
    Json,
    Yaml,
    Html,
}

#[derive(Args)]
pub(crate) struct SimulateArgs {
    #[command(flatten)]
    pub(crate) evaluated: Evaluated,
    /// Decide with --config (new) and with this configuration (old) over the same landscape;
    /// print the shoots placed differently, then a summary of each configuration.
    #[arg(long, value_name = "OLD_CONFIG", conflicts_with_all = ["explain", "timeline"])]
    pub(crate) compare: Option<PathBuf>,
    /// Decide every shoot again as if it were pending (seedName cleared on every shoot this
    /// scheduler would schedule), in creation order, each placement counting for the next.
    #[arg(long)]
    pub(crate) replay: bool,
    /// Explain the decision for one shoot (namespace/name): every seed, best first.
    #[arg(long, value_name = "NAMESPACE/NAME")]
    pub(crate) explain: Option<String>,
    /// Print which profile entry is active when over FROM..TO (RFC 3339), one line per change.
    #[arg(long, value_name = "FROM..TO", value_parser = parse_range)]
    pub(crate) timeline: Option<(DateTime<Utc>, DateTime<Utc>)>,
    /// With --timeline: rehearse SEED failing from FROM until it is well again at TO (RFC 3339):
    /// the evacuation and fail-back the scheduler process would publish
    /// (`schedulers.shoot.evacuation`, `failback`), each move at its start.
    #[arg(long, value_name = "SEED@FROM..TO", requires = "timeline", value_parser = parse_outage)]
    pub(crate) outage: Option<(String, Window)>,
}

pub(crate) fn parse_time(s: &str) -> Result<DateTime<Utc>, String> {
    DateTime::parse_from_rfc3339(s)
        .map(|t| t.to_utc())
        .map_err(|e| format!("{s:?} is not an RFC 3339 timestamp: {e}"))
}

/// From when to when (a range of RFC 3339 instants).
pub(crate) type Window = (DateTime<Utc>, DateTime<Utc>);

pub(crate) fn parse_outage(s: &str) -> Result<(String, Window), String> {
    let (seed, range) = s
        .split_once('@')
        .ok_or_else(|| format!("{s:?}: expected SEED@FROM..TO"))?;
    if seed.is_empty() {
        return Err(format!("{s:?}: the seed's name is missing before '@'"));
    }
    Ok((seed.to_string(), parse_range(range)?))
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

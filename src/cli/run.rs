//! `gardener-scheduler run` (the default): the scheduler against the cluster.

use std::process::ExitCode;

use gardener_scheduler::compile::Compiled;
use gardener_scheduler::config::{self, SchedulerConfiguration};
use gardener_scheduler::controller;

use super::args::*;
use super::common::*;

/// What `debugging` asks for and what this scheduler does about it, said once at start-up.
pub(crate) fn debugging_notes(cfg: &SchedulerConfiguration) -> Vec<&'static str> {
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

pub(crate) fn run_cmd(args: RunArgs) -> ExitCode {
    finish(run(args))
}

fn run(args: RunArgs) -> Outcome {
    let mut compiled = load_config(args.config.as_ref(), args.strict)?;
    if let Some(k) = &args.kubeconfig {
        compiled.config.client_connection.kubeconfig = k.display().to_string();
    }
    check_expectations(&compiled, &args.expect).map_err(|messages| Failure {
        code: EXIT_BAD_INPUT,
        messages,
    })?;
    let (cfg, warnings) = (&compiled.config, &compiled.warnings);
    if args.validate_only {
        print_warnings(warnings);
        for note in debugging_notes(cfg) {
            say!("note: {note}");
        }
        return Ok(write_stdout(|out| {
            let text = serde_yaml_ng::to_string(cfg).map_err(std::io::Error::other)?;
            out.write_all(text.as_bytes())
        }));
    }
    init_logging(cfg);
    for w in warnings {
        tracing::warn!(field = %w.path, "{}", w.message);
    }
    for note in debugging_notes(cfg) {
        tracing::warn!("{note}");
    }
    exit_on_panic();
    let runtime = tokio::runtime::Runtime::new()
        .map_err(|e| Failure::failed(format!("starting the async runtime: {e}")))?;
    let result = runtime.block_on(controller::run_with_signals(
        compiled,
        Box::new(gardener_scheduler::evacuation::task),
    ));
    // what is left (idle connections, the blocking pool) does not hold up the exit
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    result.map(|()| ExitCode::SUCCESS).map_err(|e| {
        tracing::error!(error = %e, "gardener-scheduler failed");
        Failure::failed(e.to_string())
    })
}

/// Compares the loaded configuration with what the installation was made for (`--expect-*`):
/// one message per difference, naming the configuration's value, the installation's, and the
/// chart value that sets the latter.
fn check_expectations(compiled: &Compiled, expect: &Expectations) -> Result<(), Vec<String>> {
    let cfg = &compiled.config;
    let mut problems = Vec::new();
    let le = &cfg.leader_election;
    let lease = format!("{}/{}", le.resource_namespace, le.resource_name);
    match &expect.expect_lease {
        None => {}
        Some(ExpectedLease::None) if le.leader_elect => problems.push(format!(
            "leaderElection.leaderElect: the configuration elects a leader through the Lease \
             {lease}, but the installation grants no Lease (--expect-lease none); set the chart \
             values config.leaderElection.leaderElect: true, resourceNamespace and resourceName \
             to match the configuration"
        )),
        Some(ExpectedLease::None) => {}
        Some(ExpectedLease::Lease { namespace, name }) if !le.leader_elect => {
            problems.push(format!(
                "leaderElection.leaderElect: the configuration elects no leader, but the \
                 installation expects the Lease {namespace}/{name} (--expect-lease \
                 {namespace}/{name}); every replica would schedule; set the chart value \
                 config.leaderElection.leaderElect: false (with replicaCount: 1), or enable \
                 leader election in the configuration"
            ))
        }
        Some(ExpectedLease::Lease { namespace, name })
            if (namespace, name) != (&le.resource_namespace, &le.resource_name) =>
        {
            problems.push(format!(
                "leaderElection: the configuration uses the Lease {lease} \
                 (resourceNamespace/resourceName), but the installation may update only \
                 {namespace}/{name} (--expect-lease {namespace}/{name}); set the chart values \
                 config.leaderElection.resourceNamespace: {} and \
                 config.leaderElection.resourceName: {}",
                le.resource_namespace, le.resource_name
            ))
        }
        Some(ExpectedLease::Lease { .. }) => {}
    }
    for (key, what, value, flag, expected) in [
        (
            "server.healthProbes.port",
            "/healthz and /readyz",
            cfg.server.health_probes.port,
            "--expect-health-port",
            expect.expect_health_port,
        ),
        (
            "server.metrics.port",
            "/metrics",
            cfg.server.metrics.port,
            "--expect-metrics-port",
            expect.expect_metrics_port,
        ),
    ] {
        if let Some(port) = expected
            && i64::from(port) != value
        {
            problems.push(format!(
                "{key}: the configuration serves {what} on port {value}, but the installation \
                 expects port {port} ({flag} {port}); set the chart value config.{key}: {value}"
            ));
        }
    }
    if let Some(mode) = expect.expect_binding_mode {
        let want = match mode {
            BindingMode::Binding => config::BindingMode::Binding,
            BindingMode::Patch => config::BindingMode::Patch,
        };
        let have = cfg.schedulers.shoot.binding_mode;
        if have != want {
            problems.push(format!(
                "schedulers.shoot.bindingMode: the configuration binds with {have:?}, but the \
                 installation grants what {want:?} needs (--expect-binding-mode {want:?}); set the chart \
                 value config.schedulers.shoot.bindingMode: {have:?}"
            ));
        }
    }
    if let Some(want) = expect.expect_carbon_intensity {
        let have = compiled
            .chain
            .cluster_data()
            .into_iter()
            .any(|d| d.into_carbon_settings().is_some());
        if have != want {
            let (config_says, grant, fix) = if have {
                (
                    "uses the CarbonIntensity priority, which reads ConfigMaps in every namespace",
                    "grants no such reads",
                    "add the CarbonIntensity priority to config.schedulers.shoot.priorities (or \
                     to a profile) as the configuration has it",
                )
            } else {
                (
                    "uses no CarbonIntensity priority",
                    "grants reads of ConfigMaps in every namespace for one",
                    "remove CarbonIntensity from config.schedulers.shoot.priorities and the \
                     profiles",
                )
            };
            problems.push(format!(
                "CarbonIntensity: the configuration {config_says}, but the installation {grant} \
                 (--expect-carbon-intensity {want}); in the chart values, {fix}"
            ));
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems)
    }
}

/// Exit code of a process ended by a panic.
const PANIC_EXIT: i32 = 70;

/// A panic anywhere — a watch feed, a worker, the elector — ends the process with one ERROR line
/// naming where, so that it is restarted instead of running on half-working (a feed that
/// panicked would leave its kind unwatched while the process looks healthy).
fn exit_on_panic() {
    std::panic::set_hook(Box::new(|info| {
        let what = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "(no message)".into());
        let location = info
            .location()
            .map_or_else(|| "unknown".into(), |l| l.to_string());
        let thread = std::thread::current()
            .name()
            .unwrap_or("unnamed")
            .to_string();
        tracing::error!(panic = %what, %location, %thread, "a task panicked; exiting so that the process is restarted");
        std::process::exit(PANIC_EXIT);
    }));
}

/// Lines of the client library that the scheduler says itself in one line (the watcher's
/// error with a debug dump of the API's `Status`, a body that did not parse quoted whole):
/// kept to ERROR unless `RUST_LOG` names these targets.
const LIBRARY_DUMPS: [&str; 2] = ["kube_runtime::watcher=error", "kube_client::client=error"];

/// The filter of `level`, or of `RUST_LOG` (`env`) when set, without [`LIBRARY_DUMPS`].
pub(crate) fn log_filter(level: &str, env: Option<&str>) -> tracing_subscriber::EnvFilter {
    use tracing_subscriber::EnvFilter;
    let mut filter = env
        .and_then(|e| EnvFilter::try_new(e).ok())
        .unwrap_or_else(|| EnvFilter::new(level));
    for directive in LIBRARY_DUMPS {
        let target = directive.split('=').next().unwrap_or_default();
        if env.is_none_or(|e| !e.contains(target))
            && let Ok(d) = directive.parse()
        {
            filter = filter.add_directive(d);
        }
    }
    filter
}

/// Logs go to stderr in `logFormat` at `logLevel`; `RUST_LOG`, when set, refines the filter.
pub(crate) fn init_logging(cfg: &SchedulerConfiguration) {
    let level = match cfg.log_level {
        config::LogLevel::Debug => "debug",
        config::LogLevel::Info => "info",
        config::LogLevel::Error => "error",
    };
    let env = std::env::var("RUST_LOG").ok().filter(|e| !e.is_empty());
    let filter = log_filter(level, env.as_deref());
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

#[cfg(test)]
mod filter_tests {
    use super::*;

    /// The lines the filter lets through at `level` (and `RUST_LOG`), of a WARN from the
    /// watcher with a debug dump, one from kube's client, and the scheduler's own WARN.
    fn through(level: &str, env: Option<&str>) -> String {
        let out = std::sync::Arc::new(std::sync::Mutex::new(Vec::<u8>::new()));
        let writer = {
            let out = out.clone();
            move || Sink(out.clone())
        };
        let subscriber = tracing_subscriber::fmt()
            .with_env_filter(log_filter(level, env))
            .with_writer(writer)
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            tracing::warn!(target: "kube_runtime::watcher", "watch list error with 403: Api(Status {{ code: 403 }})");
            tracing::warn!(target: "kube_client::client", "<html>...</html>, Error(\"expected value\")");
            tracing::warn!(target: "gardener_scheduler::controller::feed::watch", "watch failed; retrying");
        });
        String::from_utf8(out.lock().unwrap().clone()).unwrap()
    }

    struct Sink(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

    impl std::io::Write for Sink {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn the_client_librarys_dumps_are_left_out_unless_asked_for() {
        for (level, env) in [
            ("info", None),
            ("debug", Some("info,gardener_scheduler=debug")),
        ] {
            let text = through(level, env);
            assert!(text.contains("watch failed; retrying"), "{text}");
            assert!(!text.contains("Status {"), "{level} {env:?}: {text}");
            assert!(!text.contains("<html>"), "{level} {env:?}: {text}");
        }
        let asked = through("info", Some("info,kube_runtime::watcher=warn"));
        assert!(asked.contains("watch list error with 403"), "{asked}");
    }
}

#[cfg(test)]
mod panic_tests {
    use super::*;

    /// In a child process (this test binary run again): installs the hook and panics in a
    /// spawned task, as a feed or worker would.
    #[test]
    fn a_panicking_task_ends_the_process_with_a_clear_line() {
        if std::env::var_os("PANIC_CHILD").is_some() {
            let _ = tracing_subscriber::fmt()
                .with_writer(std::io::stderr)
                .with_ansi(false)
                .try_init();
            exit_on_panic();
            let rt = tokio::runtime::Runtime::new().unwrap();
            rt.block_on(async {
                let feed = tokio::spawn(async { panic!("feed broke") });
                let _ = feed.await;
                // a process that went on after the panic would get here
                std::thread::sleep(std::time::Duration::from_secs(5));
            });
            std::process::exit(0);
        }
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "cli::run::panic_tests::a_panicking_task_ends_the_process_with_a_clear_line",
                "--nocapture",
            ])
            .env("PANIC_CHILD", "1")
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(PANIC_EXIT), "{stderr}");
        let line = stderr
            .lines()
            .find(|l| l.contains("a task panicked; exiting"))
            .unwrap_or_else(|| panic!("no ERROR line: {stderr}"));
        assert!(
            line.contains("ERROR") && line.contains("feed broke"),
            "{line}"
        );
        assert!(line.contains("src/cli/run.rs"), "names where: {line}");
    }
}

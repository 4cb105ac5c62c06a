//! `gardener-scheduler run` (the default): the scheduler against the cluster.

use std::process::ExitCode;

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
            say!("note: {note}");
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
            say!("error: starting the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(controller::run_with_signals(compiled)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!(error = %e, "gardener-scheduler failed");
            say!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Logs go to stderr in `logFormat` at `logLevel`; `RUST_LOG`, when set, refines the filter.
pub(crate) fn init_logging(cfg: &SchedulerConfiguration) {
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

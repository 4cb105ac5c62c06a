//! What the commands share: loading the configuration and the landscape, warnings, stdout.

use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;

use gardener_scheduler::chain::ProfileChain;
use gardener_scheduler::compile::{self, Compiled};
use gardener_scheduler::config::{self, SchedulerConfiguration};
use gardener_scheduler::plugin::ClusterData;
use gardener_scheduler::simulate::{self, Landscape};

use super::args::*;

/// Exit status for bad input or configuration.
pub(crate) const EXIT_BAD_INPUT: u8 = 2;
/// Exit status when the reader of the output went away (a closed pipe), as a shell reports a
/// process ended by SIGPIPE: `simulate ... | head` ends quietly.
pub(crate) const EXIT_CLOSED_PIPE: u8 = 141;

/// Why a command stopped before its output: the messages for stderr (each shown after
/// `error: `) and the exit status.
#[derive(Debug)]
pub(crate) struct Failure {
    pub(crate) code: u8,
    pub(crate) messages: Vec<String>,
}

impl Failure {
    /// Bad input or configuration: exit status 2.
    pub(crate) fn bad_input(message: impl Into<String>) -> Self {
        Failure {
            code: EXIT_BAD_INPUT,
            messages: vec![message.into()],
        }
    }

    /// Anything else (the cluster could not be read, a search ran out of time): exit status 1.
    pub(crate) fn failed(message: impl Into<String>) -> Self {
        Failure {
            code: 1,
            messages: vec![message.into()],
        }
    }

    /// One more line of explanation after the others.
    pub(crate) fn and(mut self, message: impl Into<String>) -> Self {
        self.messages.push(message.into());
        self
    }
}

/// What a command returns: the exit status of its output (a closed pipe, a full disk), or why it
/// stopped before.
pub(crate) type Outcome = Result<ExitCode, Failure>;

/// The exit status of `outcome`, its messages printed on stderr.
pub(crate) fn finish(outcome: Outcome) -> ExitCode {
    outcome.unwrap_or_else(|f| {
        for m in &f.messages {
            say!("error: {m}");
        }
        ExitCode::from(f.code)
    })
}

pub(crate) fn load_config(path: Option<&PathBuf>, strict: bool) -> Result<Compiled, Failure> {
    load_config_as("", path, strict)
}

/// [`load_config`] whose errors and warnings start with `label` (`--compare old.yaml: `), for a
/// command that reads more than one configuration.
pub(crate) fn load_config_as(
    label: &str,
    path: Option<&PathBuf>,
    strict: bool,
) -> Result<Compiled, Failure> {
    let unknown = if strict {
        config::UnknownKeys::Reject
    } else {
        config::UnknownKeys::Warn
    };
    compile::load_with(path.map(PathBuf::as_path), unknown)
        .map_err(|e| Failure::bad_input(format!("{label}{e}")))
}

/// For commands that print to the terminal: one line per ignored key.
pub(crate) fn print_warnings(warnings: &[config::FieldError]) {
    print_warnings_as("", warnings);
}

fn print_warnings_as(label: &str, warnings: &[config::FieldError]) {
    for w in warnings {
        say!("warning: {label}{w}");
    }
}

/// Runs `write` on buffered stdout. A closed pipe ends the program quietly; any other write
/// error (a full disk) is reported naming the output.
pub(crate) fn write_stdout(write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>) -> ExitCode {
    let stdout = std::io::stdout();
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, stdout.lock());
    match write(&mut out).and_then(|()| out.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::from(EXIT_CLOSED_PIPE),
        Err(e) => {
            // Whatever is still buffered cannot be written either; drop it without retrying.
            let _ = out.into_parts();
            say!("error: writing the output to stdout: {e}");
            ExitCode::FAILURE
        }
    }
}

/// [`write_stdout`] for human-readable output (tables, text, explanations): every control,
/// bidi and zero-width character that input put into it is made visible
/// ([`gardener_scheduler::escape::TextWriter`]).
pub(crate) fn write_stdout_text(
    write: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> ExitCode {
    write_stdout(|out| {
        let mut text = gardener_scheduler::escape::TextWriter::new(out);
        write(&mut text)?;
        text.flush()
    })
}

/// Loads and compiles a configuration for an offline command (warnings on stderr).
pub(crate) fn load_offline(path: Option<&PathBuf>, strict: bool) -> Result<Compiled, Failure> {
    load_offline_as("", path, strict)
}

/// [`load_offline`] with every message prefixed by `label`.
pub(crate) fn load_offline_as(
    label: &str,
    path: Option<&PathBuf>,
    strict: bool,
) -> Result<Compiled, Failure> {
    let compiled = load_config_as(label, path, strict)?;
    print_warnings_as(label, &compiled.warnings);
    Ok(compiled)
}

/// Names every object the load skipped on stderr: warnings, or with `--strict` errors and exit
/// status 2 (nothing is decided on a landscape missing objects).
pub(crate) fn report_skipped(landscape: &Landscape, strict: bool) -> Result<(), Failure> {
    let level = if strict { "error" } else { "warning" };
    for s in &landscape.skipped {
        say!("{level}: skipped {s}");
    }
    if strict && !landscape.skipped.is_empty() {
        return Err(Failure::bad_input(format!(
            "--strict: {} object(s) of the manifests were skipped",
            landscape.skipped.len()
        )));
    }
    Ok(())
}

/// The landscape to decide on: the manifest files, or the cluster's objects with the files laid
/// over them.
///
/// `documents` keeps every shoot's document (for `-o yaml`, and for plans: the maintenance
/// windows and the binding documents); `what` names what a failed read leaves undone.
/// The kubeconfig a command reads the cluster with: `--kubeconfig`, else the configuration's
/// `clientConnection.kubeconfig` (empty: `$KUBECONFIG`, `~/.kube/config` or in-cluster).
pub(crate) fn kubeconfig_of(flag: Option<&PathBuf>, cfg: &SchedulerConfiguration) -> String {
    flag.map(|k| k.display().to_string())
        .unwrap_or_else(|| cfg.client_connection.kubeconfig.clone())
}

/// A client for the cluster with the configuration's `clientConnection` limits; a kubeconfig
/// that cannot be read or used is bad input, anything else a failure.
pub(crate) async fn connect(
    kubeconfig: &str,
    cfg: &SchedulerConfiguration,
    timeout: std::time::Duration,
) -> Result<simulate::Connected, Failure> {
    let cc = &cfg.client_connection;
    simulate::connect(kubeconfig, cc.qps, cc.burst, timeout)
        .await
        .map_err(|e| match e {
            simulate::ConnectError::ReadKubeconfig { .. } | simulate::ConnectError::Client(_) => {
                Failure::bad_input(e.to_string())
            }
            _ => Failure::failed(e.to_string()),
        })
}

pub(crate) fn load_landscape(
    args: &LandscapeArgs,
    cfg: &SchedulerConfiguration,
    chains: &[&ProfileChain],
    documents: bool,
    what: &str,
) -> Result<Landscape, Failure> {
    let yaml = documents;
    let files = Landscape::load_as(&args.files, yaml, args.as_written)
        .map_err(|e| Failure::bad_input(e.to_string()))?;
    if !args.live && args.kubeconfig.is_none() {
        warn_project_conflicts(&files);
        return Ok(files);
    }
    let kubeconfig = kubeconfig_of(args.kubeconfig.as_ref(), cfg);
    // What the profiles of every configuration in play declare they read.
    let data: Vec<ClusterData> = chains.iter().flat_map(|c| c.cluster_data()).collect();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::failed(format!("starting the async runtime: {e}")))?;
    let limits = simulate::Limits {
        timeout: args.request_timeout,
        ..simulate::Limits::default()
    };
    let read = runtime.block_on(async {
        let client = connect(&kubeconfig, cfg, args.request_timeout)
            .await?
            .client;
        let mut progress = progress_printer();
        simulate::read_live(&client, args.chunk_size, limits, &data, yaml, &mut progress)
            .await
            .map_err(|e| {
                Failure::failed(e.to_string()).and(format!(
                    "the landscape could not be read completely; nothing was {what}"
                ))
            })
    });
    // A credential plugin that did not answer still holds a blocking thread: do not wait for it.
    runtime.shutdown_background();
    let read = read?;
    for w in &read.warnings {
        say!("warning: {w}");
    }
    let mut landscape = read.landscape;
    for r in landscape.overlay(files) {
        say!("overlay: -f replaces {r} of the cluster");
    }
    warn_project_conflicts(&landscape);
    Ok(landscape)
}

fn warn_project_conflicts(landscape: &Landscape) {
    for w in landscape.project_conflicts() {
        say!("warning: {w}");
    }
}

/// Progress of the live read on stderr, only when stderr is a terminal: one line per kind,
/// rewritten as pages arrive.
pub(crate) fn progress_printer() -> impl FnMut(simulate::Progress<'_>) {
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

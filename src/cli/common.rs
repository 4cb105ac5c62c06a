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

pub(crate) fn load_config(path: Option<&PathBuf>, strict: bool) -> Result<Compiled, ExitCode> {
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
pub(crate) fn print_warnings(warnings: &[config::FieldError]) {
    for w in warnings {
        eprintln!("warning: {w}");
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
            eprintln!("error: writing the output to stdout: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Loads and compiles a configuration for an offline command (warnings on stderr).
pub(crate) fn load_offline(path: Option<&PathBuf>, strict: bool) -> Result<Compiled, ExitCode> {
    let compiled = load_config(path, strict)?;
    print_warnings(&compiled.warnings);
    Ok(compiled)
}

/// Names every object the load skipped on stderr: warnings, or with `--strict` errors and exit
/// status 2 (nothing is decided on a landscape missing objects).
pub(crate) fn report_skipped(landscape: &Landscape, strict: bool) -> Result<(), ExitCode> {
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
pub(crate) fn load_landscape(
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
    let limits = simulate::Limits {
        timeout: args.request_timeout,
        ..simulate::Limits::default()
    };
    let read = runtime.block_on(async {
        let client = simulate::connect(&kubeconfig, cc.qps, cc.burst, args.request_timeout)
            .await
            .map_err(|e| {
                eprintln!("error: {e}");
                match e {
                    simulate::ConnectError::ReadKubeconfig { .. }
                    | simulate::ConnectError::Client(_) => ExitCode::from(EXIT_BAD_INPUT),
                    _ => ExitCode::FAILURE,
                }
            })?;
        let mut progress = progress_printer();
        simulate::read_live(&client, args.chunk_size, limits, &data, yaml, &mut progress)
            .await
            .map_err(|e| {
                eprintln!("error: {e}");
                eprintln!("error: the landscape could not be read completely; nothing was {what}");
                ExitCode::FAILURE
            })
    });
    // A credential plugin that did not answer still holds a blocking thread: do not wait for it.
    runtime.shutdown_background();
    let read = read?;
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

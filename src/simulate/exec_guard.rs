//! An exec credential plugin run in a process group of its own, so that nothing it leaves
//! behind outlives it.
//!
//! kube runs the kubeconfig's plugin and reads its output until the end of its stdout: a plugin
//! that never answers, or one that answers but leaves a child holding its stdout or stderr,
//! would keep that read, and the caller's `$(…)`, pipe or CI step, waiting. [`wrap`] makes kube
//! run this binary instead, with [`SUBCOMMAND`]; [`run`] starts the plugin in a new process
//! group and kills that group when the plugin exits, when the deadline passes, or when the
//! command that started it has ended.

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{SigSet, Signal, killpg};
use nix::unistd::{Pid, getpgrp, tcgetpgrp, tcsetpgrp};

/// The hidden first argument that makes the binary run a plugin under guard.
pub const SUBCOMMAND: &str = "__exec-credential-guard";
/// The most bytes of a plugin's answer that are read (an ExecCredential is a few kB).
const MAX_ANSWER: u64 = 4 * 1024 * 1024;
/// How often the plugin and the command that started it are looked at.
const TICK: Duration = Duration::from_millis(20);

/// Makes kube run `exec`'s plugin through this binary, for at most `deadline` per run. Left as
/// it is when this binary's path cannot be named.
pub fn wrap(exec: &mut kube::config::ExecConfig, deadline: Duration) {
    let Some(me) = std::env::current_exe()
        .ok()
        .and_then(|p| p.to_str().map(str::to_string))
    else {
        return;
    };
    let Some(command) = exec.command.take() else {
        return;
    };
    let mut args = vec![
        SUBCOMMAND.to_string(),
        deadline.as_millis().to_string(),
        command,
    ];
    args.extend(exec.args.take().unwrap_or_default());
    exec.command = Some(me);
    exec.args = Some(args);
}

/// Runs `DEADLINE_MS COMMAND ARGS…` (the arguments after [`SUBCOMMAND`]): the plugin's answer
/// is passed on once it has exited and its process group is gone.
pub fn run(args: &[String]) -> ExitCode {
    let (Some(ms), Some(command)) = (
        args.first().and_then(|a| a.parse::<u64>().ok()),
        args.get(1),
    ) else {
        eprintln!("{SUBCOMMAND}: expected DEADLINE_MS COMMAND [ARG...]");
        return ExitCode::from(2);
    };
    let deadline = Duration::from_millis(ms);
    let parent = std::os::unix::process::parent_id();
    let mut child = match Command::new(command)
        .args(&args[2..])
        .process_group(0)
        .stdout(Stdio::piped())
        .spawn()
    {
        Ok(c) => c,
        Err(e) => {
            eprintln!("starting the exec credential plugin {command:?}: {e}");
            return ExitCode::from(1);
        }
    };
    let group = Pid::from_raw(child.id() as i32);
    let terminal = Foreground::hand_to(group);
    let mut stdout = child.stdout.take().expect("stdout is piped");
    let reader = std::thread::spawn(move || {
        let mut answer = Vec::new();
        let _ = (&mut stdout).take(MAX_ANSWER).read_to_end(&mut answer);
        answer
    });
    let started = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) => {}
            Err(_) => break None,
        }
        if started.elapsed() >= deadline || std::os::unix::process::parent_id() != parent {
            break None;
        }
        std::thread::sleep(TICK);
    };
    // Whatever the plugin started goes with it: nothing keeps the caller's output open.
    let _ = killpg(group, Signal::SIGKILL);
    let _ = child.wait();
    drop(terminal);
    let Some(status) = status else {
        eprintln!(
            "the exec credential plugin {command:?} did not answer within {} ms; its process \
             group was killed",
            deadline.as_millis()
        );
        return ExitCode::from(1);
    };
    let answer = reader.join().unwrap_or_default();
    let mut out = std::io::stdout().lock();
    if out.write_all(&answer).and_then(|()| out.flush()).is_err() {
        return ExitCode::from(1);
    }
    ExitCode::from(status.code().map_or(1, |c| c.clamp(0, 255) as u8))
}

/// The terminal's foreground, handed to the plugin's group while it runs when this process
/// holds it (an interactive plugin may prompt), and taken back afterwards.
struct Foreground {
    ours: Pid,
}

impl Foreground {
    fn hand_to(group: Pid) -> Option<Foreground> {
        let stdin = std::io::stdin();
        let ours = getpgrp();
        if tcgetpgrp(&stdin).ok()? != ours {
            return None;
        }
        // Taking the terminal back from a background group would stop this process otherwise.
        let mut ttou = SigSet::empty();
        ttou.add(Signal::SIGTTOU);
        ttou.thread_block().ok()?;
        tcsetpgrp(&stdin, group).ok()?;
        Some(Foreground { ours })
    }
}

impl Drop for Foreground {
    fn drop(&mut self) {
        let _ = tcsetpgrp(std::io::stdin(), self.ours);
    }
}

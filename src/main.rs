//! The `gardener-scheduler` command: `run` (the default), `simulate`, `explain`, `plan`, and the
//! shell completions and manual page of them all (`completion`, `man`).
#![forbid(unsafe_code)]

mod cli;

use std::process::ExitCode;

use clap::Parser;

use cli::args::{Cli, Command};

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(String::as_str)
        == Some(gardener_scheduler::simulate::exec_guard::SUBCOMMAND)
    {
        return gardener_scheduler::simulate::exec_guard::run(&args[1..]);
    }
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Simulate(args)) => cli::simulate::simulate_cmd(args),
        Some(Command::Run(args)) => cli::run::run_cmd(args),
        Some(Command::Plan(cmd)) => cli::plan::plan_cmd(cmd),
        Some(Command::Explain(args)) => cli::explain::explain_cmd(args),
        Some(Command::Completion { shell }) => cli::generate::completion_cmd(shell),
        Some(Command::Man { command }) => cli::generate::man_cmd(command.as_deref()),
        None => cli::run::run_cmd(cli.run),
    }
}

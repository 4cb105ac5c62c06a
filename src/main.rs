//! The `gardener-scheduler` command: `run` (the default), `simulate` and `plan`.
#![forbid(unsafe_code)]

mod cli;

use std::process::ExitCode;

use clap::Parser;

use cli::args::{Cli, Command};

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Some(Command::Simulate(args)) => cli::simulate::simulate_cmd(args),
        Some(Command::Run(args)) => cli::run::run_cmd(args),
        Some(Command::Plan(cmd)) => cli::plan::plan_cmd(cmd),
        None => cli::run::run_cmd(cli.run),
    }
}

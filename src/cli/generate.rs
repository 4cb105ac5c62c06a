//! `gardener-scheduler completion SHELL` and `gardener-scheduler man`: shell completions and the
//! manual page, generated from the command-line definition itself, so they never fall behind it.

use std::process::ExitCode;

use clap::CommandFactory;

use super::args::Cli;
use super::common::*;

/// The binary's name, as the completions and the manual page call it.
const NAME: &str = "gardener-scheduler";

pub(crate) fn completion_cmd(shell: clap_complete::Shell) -> ExitCode {
    let mut script = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), NAME, &mut script);
    if shell == clap_complete::Shell::Bash {
        script = bash_states_spelled_alike(&String::from_utf8_lossy(&script)).into_bytes();
    }
    write_stdout(|out| out.write_all(&script))
}

/// clap_complete's bash script tracks the subcommand typed so far in a state such as
/// `gardener__scheduler__subcmd__plan`, but for a binary named with a hyphen it spells the
/// branches that match the state `gardener__subcmd__scheduler__subcmd__plan`, so nothing after
/// a subcommand ever completed. The branches are spelled as the state is.
fn bash_states_spelled_alike(script: &str) -> String {
    let wrong = NAME.replace('-', "__subcmd__");
    let right = NAME.replace('-', "__");
    script.replace(&wrong, &right)
}

pub(crate) fn man_cmd(command: Option<&str>) -> ExitCode {
    finish(man(command))
}

fn man(command: Option<&str>) -> Outcome {
    let cmd = Cli::command();
    let page = match command {
        None => cmd,
        Some(name) => {
            let names: Vec<String> = cmd
                .get_subcommands()
                .map(|s| s.get_name().to_string())
                .collect();
            let sub = cmd.find_subcommand(name).ok_or_else(|| {
                Failure::bad_input(format!(
                    "man {name}: no such command; one of: {}",
                    names.join(", ")
                ))
            })?;
            // A subcommand's page is named as man(1) looks it up: gardener-scheduler-simulate.
            let title = format!("{NAME}-{}", sub.get_name());
            sub.clone().display_name(title.clone()).bin_name(title)
        }
    };
    Ok(write_stdout(|out| clap_mangen::Man::new(page).render(out)))
}

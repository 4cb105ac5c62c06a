//! The commands the README and the usage pages show stay true: every `gardener-scheduler …`,
//! `cargo run -- …` and `make …` command in their shell blocks and inline code is run with the
//! binary this build made, from the repository root, as a reader would type it.
//!
//! - Offline commands (a landscape from files, `--validate-only`, `completion`, `man`, `--help`)
//!   run and must exit 0 with output. Placeholders of a synopsis (`FILE`, `PATH`, `SEED`, …) and
//!   the files a reader brings are replaced by the example files (`PLACEHOLDERS`, `READER_FILES`);
//!   alternatives (`bash|zsh|fish`) run each.
//! - Commands that need a cluster (`--kubeconfig`, `--live`, `plan apply`, running the scheduler)
//!   are not run here: their command and flags must still parse (`--help` appended). The
//!   end-to-end tests run them against a real API server.
//! - `make TARGET` must name a target of the Makefile; a target whose recipe is
//!   `$(CARGO) run … -- ARGS` runs ARGS like any other command.
//! - A command named in prose without flags (`gardener-scheduler simulate`) must exist: its
//!   `--help` must succeed.

use std::path::{Path, PathBuf};
use std::process::Command;

use pulldown_cmark::{CodeBlockKind, Event, Options, Parser, Tag, TagEnd};

/// Stand-ins for the placeholders of a synopsis.
const PLACEHOLDERS: &[(&str, &str)] = &[
    ("FILE", "example/20-componentconfig-gardener-scheduler.yaml"),
    ("PATH", "example/landscape/"),
    ("LANDSCAPE", "example/landscape/"),
    ("SEED", "aws-eu1"),
    ("N", "5"),
    ("COMMAND", "simulate"),
    ("PLAN.json", "drain.json"),
    ("NAMESPACE/NAME", "garden-webshop/storefront"),
    ("FROM..TO", "2026-12-01T00:00:00Z..2026-12-08T00:00:00Z"),
];

/// Files the pages assume the reader has, and the example file of the same kind.
const READER_FILES: &[(&str, &str)] = &[(
    "schedulerconfiguration.yaml",
    "example/20-componentconfig-gardener-scheduler.yaml",
)];

/// The pages whose commands are checked.
fn pages() -> Vec<PathBuf> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut pages = vec![root.join("README.md")];
    let mut usage: Vec<PathBuf> = std::fs::read_dir(root.join("docs/usage"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    usage.sort();
    pages.extend(usage);
    pages
}

/// One command as a page shows it.
#[derive(Clone, Debug)]
struct Shown {
    /// `page:line`
    at: String,
    text: String,
    /// Named in prose (inline code) rather than shown in a shell block.
    inline: bool,
}

const PREFIXES: &[&str] = &["gardener-scheduler", "cargo run", "make"];

fn is_command(text: &str) -> bool {
    let first = text.split(' ').next().unwrap_or_default();
    PREFIXES.iter().any(|p| {
        text.strip_prefix(p)
            .is_some_and(|rest| rest.starts_with(' ') || (rest.is_empty() && first != "make"))
    })
}

/// The text before an unquoted ` #` comment.
fn without_comment(line: &str) -> &str {
    let (mut single, mut double) = (false, false);
    let mut previous = ' ';
    for (i, c) in line.char_indices() {
        match c {
            '\'' if !double => single = !single,
            '"' if !single => double = !double,
            '#' if !single && !double && previous.is_whitespace() => return &line[..i],
            _ => {}
        }
        previous = c;
    }
    line
}

/// The commands of one page: shell blocks (lines joined at a trailing `\`) and inline code.
fn shown_in(page: &Path) -> Vec<Shown> {
    let text = std::fs::read_to_string(page).unwrap();
    let name = page
        .strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap()
        .display()
        .to_string();
    let line_of = |offset: usize| text[..offset].matches('\n').count() + 1;
    let mut out = Vec::new();
    let mut block: Option<(usize, String)> = None;
    for (event, range) in Parser::new_ext(&text, Options::ENABLE_TABLES).into_offset_iter() {
        match event {
            Event::Start(Tag::CodeBlock(kind)) => {
                let shell = match kind {
                    CodeBlockKind::Fenced(lang) => {
                        matches!(&*lang, "sh" | "bash" | "shell" | "console")
                    }
                    CodeBlockKind::Indented => false,
                };
                if shell {
                    block = Some((line_of(range.start) + 1, String::new()));
                }
            }
            Event::Text(t) => {
                if let Some((_, b)) = &mut block {
                    b.push_str(&t);
                }
            }
            Event::End(TagEnd::CodeBlock) => {
                let Some((first, b)) = block.take() else {
                    continue;
                };
                let mut joined = String::new();
                let mut start = first;
                for (n, line) in b.lines().enumerate() {
                    if joined.is_empty() {
                        start = first + n;
                    }
                    let line = without_comment(line).trim_end();
                    match line.strip_suffix('\\') {
                        Some(part) => joined.push_str(part),
                        None => {
                            joined.push_str(line);
                            let command = joined.trim().to_string();
                            if is_command(&command) {
                                out.push(Shown {
                                    at: format!("{name}:{start}"),
                                    text: command,
                                    inline: false,
                                });
                            }
                            joined.clear();
                        }
                    }
                }
            }
            Event::Code(code) if block.is_none() && is_command(&code) => out.push(Shown {
                at: format!("{name}:{}", line_of(range.start)),
                text: code.to_string(),
                inline: true,
            }),
            _ => {}
        }
    }
    out
}

/// What checking one shown command means.
#[derive(Debug, PartialEq)]
enum Check {
    /// Runs offline: must exit 0 and print something.
    Run(Vec<String>),
    /// Needs a cluster, or is only named: `ARGS --help` must exit 0.
    Parses(Vec<String>),
    /// A Makefile target that is not a command of the binary: it must exist.
    MakeTarget(String),
}

/// The Makefile's targets with their recipe lines.
fn make_targets() -> Vec<(String, Vec<String>)> {
    let text =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("Makefile")).unwrap();
    let mut targets: Vec<(String, Vec<String>)> = Vec::new();
    for line in text.lines() {
        if let Some(recipe) = line.strip_prefix('\t') {
            if let Some((_, lines)) = targets.last_mut() {
                lines.push(recipe.to_string());
            }
        } else if let Some((name, _)) = line.split_once(':')
            && !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
            && !line.contains(":=")
        {
            targets.push((name.to_string(), Vec::new()));
        }
    }
    targets
}

/// Replaces placeholders, `[optional]` brackets and `...`; one word may stand for several
/// (`bash|zsh|fish`), so one command may become several.
fn expand(words: &[String]) -> Result<Vec<Vec<String>>, String> {
    let mut out: Vec<Vec<String>> = vec![Vec::new()];
    for word in words {
        let word = word.trim_start_matches('[').trim_end_matches(']');
        let word = word.strip_suffix("...").unwrap_or(word);
        let choices: Vec<&str> = if word.contains('|') && !word.contains('/') {
            word.split('|').collect()
        } else {
            vec![word]
        };
        let mut choices_out = Vec::new();
        for choice in choices {
            let value = if let Some((_, v)) = PLACEHOLDERS.iter().find(|(p, _)| *p == choice) {
                v.to_string()
            } else if let Some((_, v)) = READER_FILES.iter().find(|(f, _)| *f == choice) {
                v.to_string()
            } else if choice.len() > 1
                && choice
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c == '_' || c == '.')
            {
                return Err(format!(
                    "placeholder {choice:?} has no stand-in: add one to PLACEHOLDERS"
                ));
            } else {
                choice.to_string()
            };
            choices_out.push(value);
        }
        out = out
            .into_iter()
            .flat_map(|prefix| {
                choices_out.iter().map(move |c| {
                    let mut p = prefix.clone();
                    p.push(c.clone());
                    p
                })
            })
            .collect();
    }
    Ok(out)
}

/// The subcommands that read no cluster unless told to (`--kubeconfig`, `--live`).
const OFFLINE_COMMANDS: &[&str] = &["simulate", "plan", "explain", "completion", "man", "help"];

/// Whether the binary with these arguments needs a cluster.
fn needs_cluster(args: &[String]) -> bool {
    let has = |flag: &str| args.iter().any(|a| a == flag);
    if has("--kubeconfig") || has("--live") {
        return true;
    }
    if args.windows(2).any(|w| w[0] == "plan" && w[1] == "apply") {
        return true;
    }
    // Without a subcommand (or with `run`) the binary runs the scheduler.
    let runs_scheduler = !args.iter().any(|a| OFFLINE_COMMANDS.contains(&a.as_str()));
    runs_scheduler && !has("--validate-only") && !has("--help") && !has("--version")
}

/// How `shown` is checked: the binary's arguments, or a make target.
fn checks(shown: &Shown, targets: &[(String, Vec<String>)]) -> Result<Vec<Check>, String> {
    let mut words = shell_words::split(&shown.text).map_err(|e| format!("{e}"))?;
    // Output redirection: the test reads stdout itself.
    if let Some(at) = words.iter().position(|w| w.starts_with('>')) {
        words.truncate(at);
    }
    let args: Vec<String> = match words.first().map(String::as_str) {
        Some("gardener-scheduler") => words[1..].to_vec(),
        Some("cargo") => match words.iter().position(|w| w == "--") {
            Some(at) => words[at + 1..].to_vec(),
            None => Vec::new(),
        },
        Some("make") => {
            let mut out = Vec::new();
            for target in &words[1..] {
                let (_, recipe) = targets
                    .iter()
                    .find(|(t, _)| t == target)
                    .ok_or_else(|| format!("the Makefile has no target {target:?}"))?;
                let run = recipe
                    .iter()
                    .find_map(|l| l.trim().strip_prefix("$(CARGO) run")?.split_once(" -- "));
                match run {
                    Some((_, args)) => out.extend(checks(
                        &Shown {
                            text: format!("gardener-scheduler {args}"),
                            ..shown.clone()
                        },
                        targets,
                    )?),
                    None => out.push(Check::MakeTarget(target.clone())),
                }
            }
            return Ok(out);
        }
        _ => return Err("not a command".into()),
    };
    let named_only = shown.inline
        && args
            .iter()
            .all(|a| !a.starts_with('-') && a.chars().all(|c| c.is_ascii_lowercase()));
    Ok(expand(&args)?
        .into_iter()
        .map(|args| {
            if named_only || needs_cluster(&args) {
                Check::Parses(args)
            } else {
                Check::Run(args)
            }
        })
        .collect())
}

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gardener-scheduler"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c.env_remove("KUBECONFIG");
    c
}

/// Runs one check; `Err` says what went wrong.
fn run(check: &Check) -> Result<(), String> {
    let (args, help) = match check {
        Check::Run(args) => (args.clone(), false),
        Check::Parses(args) => ([&args[..], &["--help".to_string()]].concat(), true),
        Check::MakeTarget(_) => return Ok(()),
    };
    let out = bin()
        .args(&args)
        .output()
        .map_err(|e| format!("could not start: {e}"))?;
    let err = String::from_utf8_lossy(&out.stderr);
    if !out.status.success() {
        return Err(format!("exit {:?}: {}", out.status.code(), err.trim()));
    }
    if out.stdout.is_empty() {
        return Err(format!(
            "printed nothing{}",
            if help { " for --help" } else { "" }
        ));
    }
    Ok(())
}

fn all_checks() -> Vec<(Shown, Check)> {
    let targets = make_targets();
    let mut out = Vec::new();
    let mut errors = Vec::new();
    for page in pages() {
        for shown in shown_in(&page) {
            match checks(&shown, &targets) {
                Ok(checks) => out.extend(checks.into_iter().map(|c| (shown.clone(), c))),
                Err(e) => errors.push(format!("{}: `{}`: {e}", shown.at, shown.text)),
            }
        }
    }
    assert!(errors.is_empty(), "{}", errors.join("\n"));
    out
}

#[test]
fn every_command_the_readme_and_usage_pages_show_runs() {
    let checks = all_checks();
    let count = |f: fn(&Check) -> bool| checks.iter().filter(|(_, c)| f(c)).count();
    let offline = count(|c| matches!(c, Check::Run(_)));
    // The pages show dozens of commands: a parser that finds few has broken.
    assert!(offline >= 25, "only {offline} offline commands found");
    let failures: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = checks
            .iter()
            .map(|(shown, check)| s.spawn(move || (shown, check, run(check))))
            .collect();
        handles
            .into_iter()
            .filter_map(|h| {
                let (shown, check, result) = h.join().unwrap();
                result
                    .err()
                    .map(|e| format!("{}: `{}` ({check:?}): {e}", shown.at, shown.text))
            })
            .collect()
    });
    for (shown, check) in &checks {
        if let Check::Parses(args) = check
            && needs_cluster(args)
        {
            eprintln!(
                "needs a cluster, checked to parse: {}: {}",
                shown.at, shown.text
            );
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn commands_are_read_as_a_shell_reads_them() {
    let targets = make_targets();
    let shown = |text: &str, inline: bool| Shown {
        at: "test".into(),
        text: text.into(),
        inline,
    };
    let owned = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        checks(
            &shown(
                "cargo run -- simulate -f example/landscape/ -o html > simulate.html",
                false
            ),
            &targets
        ),
        Ok(vec![Check::Run(owned(&[
            "simulate",
            "-f",
            "example/landscape/",
            "-o",
            "html"
        ]))])
    );
    assert_eq!(
        checks(
            &shown("gardener-scheduler completion bash|zsh", true),
            &targets
        ),
        Ok(vec![
            Check::Run(owned(&["completion", "bash"])),
            Check::Run(owned(&["completion", "zsh"]))
        ])
    );
    assert_eq!(
        checks(
            &shown("gardener-scheduler [run] --config FILE", true),
            &targets
        ),
        Ok(vec![Check::Parses(owned(&[
            "run",
            "--config",
            "example/20-componentconfig-gardener-scheduler.yaml"
        ]))])
    );
    assert_eq!(
        checks(&shown("make simulate", false), &targets),
        Ok(vec![Check::Run(owned(&[
            "simulate",
            "-f",
            "example/landscape/"
        ]))])
    );
    assert!(checks(&shown("make no-such-target", false), &targets).is_err());
    assert!(
        checks(
            &shown("gardener-scheduler plan drain SHOOT", false),
            &targets
        )
        .is_err()
    );
    assert_eq!(
        without_comment(r#"gardener-scheduler completion zsh > "${fpath[1]}/x" # comment"#),
        r#"gardener-scheduler completion zsh > "${fpath[1]}/x" "#
    );
}

/// The names under `Commands:` in `args`' help, without `help`.
fn subcommands(args: &[&str]) -> Vec<String> {
    let out = bin()
        .args(args)
        .arg("--help")
        .output()
        .expect("the binary runs");
    let help = String::from_utf8_lossy(&out.stdout).into_owned();
    help.lines()
        .skip_while(|l| !l.starts_with("Commands:"))
        .skip(1)
        .take_while(|l| !l.trim().is_empty())
        .filter_map(|l| l.split_whitespace().next().map(str::to_string))
        .filter(|name| name != "help")
        .collect()
}

#[test]
fn the_readme_s_command_list_names_every_command_and_plan_subcommand() {
    let readme =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("README.md")).unwrap();
    let list = readme
        .split_once("Every command")
        .map(|(_, rest)| rest.split("\n## ").next().unwrap_or_default())
        .expect("README.md has its command list");
    let mut wanted: Vec<String> = subcommands(&[])
        .into_iter()
        .map(|c| format!("gardener-scheduler {c} "))
        .collect();
    assert!(wanted.len() >= 6, "{wanted:?}");
    wanted.extend(
        subcommands(&["plan"])
            .into_iter()
            .map(|c| format!("gardener-scheduler plan {c} ")),
    );
    // `run` is the default: the list shows it as `gardener-scheduler --config FILE`
    let missing: Vec<&String> = wanted
        .iter()
        .filter(|w| !list.contains(w.as_str()))
        .filter(|w| {
            *w != "gardener-scheduler run " || !list.contains("gardener-scheduler --config")
        })
        .collect();
    assert!(
        missing.is_empty(),
        "README.md's command list lacks {missing:?}"
    );
}

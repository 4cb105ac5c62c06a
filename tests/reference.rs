//! Differential test against upstream's own decision code: generated landscapes
//! (`tests/reference/generate.rs`) are decided by Gardener's `DetermineSeed`, compiled unchanged
//! from its Go module (`tests/reference/main.go`, built once per machine by
//! `tests/reference/ensure.sh`), and by this project's pipeline in both modes, explain
//! (`simulate`'s) and fast (the scheduler process's). Every shoot must get a seed upstream would
//! pick equally (upstream picks among ties), or fail on both sides; both must see the same shoots
//! as pending. A difference fails the test unless a rule below recognises it as one of the
//! deliberate differences of docs/concepts/scheduler.md.
//!
//! The reference program's timing mode, which `make reference-bench` uses to time upstream
//! through its informer cache, is checked here against the fake-client mode on a small landscape
//! of the benchmark's generator.
//!
//! `REFERENCE_LANDSCAPES` (default 2,000) and `REFERENCE_SEED` (default 0: landscapes 0..N)
//! choose the landscapes; `make reference N=… SEED=…` runs a long campaign. The run prints a
//! summary and how often each filter rejected, each strategy decided and each error occurred.

#[path = "support/cases.rs"]
mod cases;
#[path = "reference/generate.rs"]
mod generate;

#[allow(dead_code)]
#[path = "../benches/support/mod.rs"]
mod support;

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use chrono::{DateTime, Utc};
use gardener_scheduler::api::{Gates, object_key};
use gardener_scheduler::compile::load_str;
use gardener_scheduler::profile::Profile;
use gardener_scheduler::regions::Regions;
use gardener_scheduler::schedule::{FitError, decide};
use gardener_scheduler::simulate::{Landscape, Simulator, is_pending, snapshot_of};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use cases::fit_kind;

const SCHEDULER: &str = "default-scheduler";

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-01T00:00:00Z")
        .unwrap()
        .to_utc()
}

fn env_number(name: &str, default: u64) -> u64 {
    match std::env::var(name) {
        Ok(v) if !v.is_empty() => v
            .parse()
            .unwrap_or_else(|_| panic!("{name}={v:?} is not a number")),
        _ => default,
    }
}

/// The reference program, built when missing.
fn reference_program() -> PathBuf {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/reference/ensure.sh");
    let out = Command::new(&script)
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|e| panic!("{}: {e}", script.display()));
    assert!(
        out.status.success(),
        "{} failed ({})",
        script.display(),
        out.status
    );
    PathBuf::from(String::from_utf8(out.stdout).expect("a path").trim())
}

#[derive(Serialize)]
struct Request<'a> {
    strategy: &'a str,
    objects: &'a [Value],
    order: Vec<Step>,
}

#[derive(Serialize)]
struct Step {
    shoot: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    bind: Option<String>,
}

#[derive(Deserialize, Debug, Default)]
struct Answer {
    #[serde(default)]
    pending: Vec<String>,
    #[serde(default)]
    decisions: Vec<Upstream>,
    invalid: Option<String>,
}

/// Upstream's decision of one shoot.
#[derive(Deserialize, Debug, Clone)]
struct Upstream {
    shoot: String,
    seed: Option<String>,
    #[serde(default)]
    ties: Vec<String>,
    error: Option<String>,
    panic: Option<String>,
}

/// A running reference program: one request a line, one answer a line.
struct Reference {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl Reference {
    fn start(program: &Path) -> Reference {
        let mut child = Command::new(program)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Reference {
            child,
            stdin,
            stdout,
        }
    }

    fn ask(&mut self, request: &Request) -> Answer {
        let mut line = serde_json::to_vec(request).expect("a request");
        line.push(b'\n');
        self.stdin.write_all(&line).expect("the reference reads");
        let mut answer = String::new();
        self.stdout
            .read_line(&mut answer)
            .expect("the reference answers");
        serde_json::from_str(&answer)
            .unwrap_or_else(|e| panic!("the reference's answer {answer:?}: {e}"))
    }
}

impl Drop for Reference {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// This project's outcome for one shoot.
#[derive(Clone, Debug, PartialEq)]
enum Ours {
    Seed(String),
    Fails(&'static str, String),
}

fn ours_of(r: &Result<gardener_scheduler::schedule::Decision, FitError>) -> Ours {
    match r {
        Ok(d) => Ours::Seed(d.seed.clone()),
        Err(e) => Ours::Fails(fit_kind(e), e.to_string()),
    }
}

/// Both modes' decisions of a landscape, in the order explain mode made them.
struct OurRun {
    pending: BTreeSet<String>,
    /// shoot, explain's outcome, fast's outcome
    decisions: Vec<(String, Ours, Ours)>,
    /// objects not read, with why
    skipped: Vec<String>,
    /// rejections by stage (explain mode), for coverage
    rejected: BTreeMap<&'static str, u64>,
}

fn profile(strategy: &str) -> Profile {
    let text = format!("schedulers:\n  shoot:\n    candidateDeterminationStrategy: {strategy}\n");
    let cfg = load_str(&text).expect("configuration");
    Profile::from_config("default", &cfg.config.schedulers.shoot).expect("profile")
}

fn run_ours(objects: &[Value], profile: &Profile) -> OurRun {
    let mut text = String::new();
    for o in objects {
        text.push_str("---\n");
        text.push_str(&serde_json::to_string(o).expect("json"));
        text.push('\n');
    }
    let mut landscape = Landscape::default();
    let mut skipped = Vec::new();
    if let Err(e) = landscape.add_text(Path::new("generated.yaml"), &text) {
        skipped.push(format!("manifests: {e}"));
    }
    skipped.extend(landscape.skipped.iter().map(|s| s.to_string()));
    let names = [SCHEDULER.to_string()];
    let pending = landscape
        .shoots
        .iter()
        .filter(|s| is_pending(s, &names))
        .map(|s| object_key(&s.metadata))
        .collect();
    let regions = Regions::with_overrides(&[]);
    let mut rejected: BTreeMap<&'static str, u64> = BTreeMap::new();
    // explain mode as `simulate` runs it; fast mode in the same order on its own snapshot
    let mut fast_snap = snapshot_of(&landscape);
    fast_snap.set_regions(regions.clone());
    let mut decisions = Vec::new();
    for outcome in Simulator::new(&landscape, profile, &names, &regions, now()) {
        let shoot = &landscape.shoots[outcome.index];
        match &outcome.result {
            Ok(d) => d
                .rejected
                .iter()
                .for_each(|r| *rejected.entry(r.stage).or_default() += 1),
            Err(FitError::NoFit { rejected: r, .. }) => r
                .iter()
                .for_each(|r| *rejected.entry(r.stage).or_default() += 1),
            Err(_) => {}
        }
        let fast = match Gates::of(&shoot.metadata).reason() {
            Some(reason) => Err(FitError::Gated { reason }),
            None => decide(shoot, &fast_snap, profile, now()),
        };
        if let Ok(d) = &fast {
            let mut placed = shoot.clone();
            placed.spec.seed_name = Some(d.seed.clone());
            fast_snap.upsert_shoot(&placed);
        }
        decisions.push((outcome.shoot, ours_of(&outcome.result), ours_of(&fast)));
    }
    OurRun {
        pending,
        decisions,
        skipped,
        rejected,
    }
}

/// A difference between the two sides.
#[derive(Debug, Clone)]
struct Difference {
    /// short, stable name of the kind of difference (the summary counts by it)
    cause: &'static str,
    shoot: String,
    detail: String,
}

/// A deliberate difference of docs/concepts/scheduler.md's table, recognised from the
/// landscape and both outcomes.
struct Rule {
    /// the cause it answers, as a summary names it
    name: &'static str,
    /// the start of the table row's "Upstream" cell, which must be in the docs
    row: &'static str,
    applies: fn(&[Value], &Difference, &Upstream) -> bool,
}

fn shoot_namespace(key: &str) -> &str {
    key.split_once('/').map_or("", |(ns, _)| ns)
}

/// The object of `kind` and `namespace/name` (or `/name`) among the objects.
fn object<'a>(objects: &'a [Value], kind: &str, key: &str) -> Option<&'a Value> {
    let (ns, name) = key.split_once('/').unwrap_or(("", key));
    objects.iter().find(|o| {
        o["kind"] == kind
            && o["metadata"]["name"].as_str() == Some(name)
            && o["metadata"]["namespace"].as_str().unwrap_or("") == ns
    })
}

/// The kind and name of the CloudProfile a shoot names.
fn profile_of(shoot: &Value) -> (String, String) {
    let r = &shoot["spec"]["cloudProfile"];
    match r["name"].as_str() {
        Some(name) => (
            r["kind"].as_str().unwrap_or("CloudProfile").to_string(),
            name.to_string(),
        ),
        None => (
            "CloudProfile".to_string(),
            shoot["spec"]["cloudProfileName"]
                .as_str()
                .unwrap_or("")
                .to_string(),
        ),
    }
}

const RULES: &[Rule] = &[
    Rule {
        name: "a namespace no Project claims",
        row: "A shoot whose namespace no Project claims fails",
        applies: |objects, diff, up| {
            let ns = shoot_namespace(&diff.shoot);
            up.error
                .as_deref()
                .is_some_and(|e| e.contains("\"<unknown>\" not found"))
                && !objects
                    .iter()
                    .any(|o| o["kind"] == "Project" && o["spec"]["namespace"].as_str() == Some(ns))
        },
    },
    Rule {
        name: "a seed with half of shootDefaults",
        row: "A seed whose `spec.networks.shootDefaults` lists pods but not services",
        applies: |objects, _, up| {
            up.panic.is_some()
                && objects.iter().any(|o| {
                    let d = &o["spec"]["networks"]["shootDefaults"];
                    o["kind"] == "Seed"
                        && d.is_object()
                        && (d["pods"].is_null() != d["services"].is_null())
                })
        },
    },
    Rule {
        name: "a NamespacedCloudProfile without a computed spec",
        row: "A NamespacedCloudProfile whose `status.cloudProfileSpec` is not filled yet",
        applies: |objects, diff, _| {
            let Some(shoot) = object(objects, "Shoot", &diff.shoot) else {
                return false;
            };
            let (kind, name) = profile_of(shoot);
            let ns = shoot_namespace(&diff.shoot);
            kind == "NamespacedCloudProfile"
                && object(objects, &kind, &format!("{ns}/{name}"))
                    .is_some_and(|ncp| ncp["status"]["cloudProfileSpec"].is_null())
        },
    },
    Rule {
        name: "several region ConfigMaps for one CloudProfile",
        row: "Several region ConfigMaps list one CloudProfile",
        applies: |objects, diff, _| {
            let Some(shoot) = object(objects, "Shoot", &diff.shoot) else {
                return false;
            };
            let (_, name) = profile_of(shoot);
            let listing = objects.iter().filter(|o| {
                o["kind"] == "ConfigMap"
                    && o["metadata"]["labels"]["scheduling.gardener.cloud/purpose"]
                        == "region-config"
                    && o["metadata"]["annotations"]["scheduling.gardener.cloud/cloudprofiles"]
                        .as_str()
                        .is_some_and(|l| l.split(',').any(|p| p.trim() == name))
            });
            listing.count() > 1
        },
    },
];

/// Compares one landscape's outcomes; returns every difference no rule explains, and counts
/// those a rule explains.
fn compare(
    objects: &[Value],
    ours: &OurRun,
    answer: &Answer,
    explained: &mut BTreeMap<&'static str, u64>,
) -> Vec<Difference> {
    let mut out = Vec::new();
    if let Some(why) = &answer.invalid {
        out.push(Difference {
            cause: "upstream cannot read the landscape",
            shoot: String::new(),
            detail: why.clone(),
        });
        return out;
    }
    if !ours.skipped.is_empty() {
        out.push(Difference {
            cause: "objects we skip",
            shoot: String::new(),
            detail: ours.skipped.join("; "),
        });
    }
    let theirs: BTreeSet<String> = answer.pending.iter().cloned().collect();
    for s in ours.pending.symmetric_difference(&theirs) {
        out.push(Difference {
            cause: "pending on one side only",
            shoot: s.clone(),
            detail: format!(
                "pending here: {}, upstream: {}",
                ours.pending.contains(s),
                theirs.contains(s)
            ),
        });
    }
    for ((shoot, explain, fast), up) in ours.decisions.iter().zip(&answer.decisions) {
        assert_eq!(shoot, &up.shoot, "the reference answers in the order asked");
        let modes_agree = match (explain, fast) {
            (Ours::Seed(a), Ours::Seed(b)) => a == b,
            (Ours::Fails(a, _), Ours::Fails(b, _)) => a == b,
            _ => false,
        };
        if !modes_agree {
            out.push(Difference {
                cause: "explain and fast disagree",
                shoot: shoot.clone(),
                detail: format!("explain {explain:?}, fast {fast:?}"),
            });
        }
        // a rule counts once a decision, whichever modes it explains
        let mut rules = BTreeSet::new();
        for (mode, ours) in [("explain", explain), ("fast", fast)] {
            let cause = match (ours, &up.seed, &up.panic) {
                (_, _, Some(_)) => Some("upstream panics"),
                (Ours::Seed(s), Some(_), _) if up.ties.contains(s) => None,
                (Ours::Seed(_), Some(_), _) => Some("another seed"),
                (Ours::Seed(_), None, _) => Some("we place, upstream fails"),
                (Ours::Fails(..), Some(_), _) => Some("we fail, upstream places"),
                (Ours::Fails(..), None, _) => None,
            };
            let Some(cause) = cause else { continue };
            let diff = Difference {
                cause,
                shoot: shoot.clone(),
                detail: format!(
                    "{mode}: {ours:?}; upstream: {}",
                    match (&up.seed, &up.error, &up.panic) {
                        (Some(s), _, _) => format!("{s} (ties {:?})", up.ties),
                        (_, Some(e), _) => format!("error {e:?}"),
                        (_, _, Some(p)) => format!("panic {p:?}"),
                        _ => "nothing".into(),
                    }
                ),
            };
            match RULES.iter().find(|r| (r.applies)(objects, &diff, up)) {
                Some(rule) => {
                    rules.insert(rule.name);
                }
                None => out.push(diff),
            }
        }
        for rule in rules {
            *explained.entry(rule).or_default() += 1;
        }
    }
    if ours.decisions.len() != answer.decisions.len() {
        out.push(Difference {
            cause: "upstream decided another number of shoots",
            shoot: String::new(),
            detail: format!(
                "{} here, {} upstream",
                ours.decisions.len(),
                answer.decisions.len()
            ),
        });
    }
    out
}

/// The filter or step an upstream error names, for coverage.
fn upstream_error_kind(e: &str) -> &'static str {
    const KINDS: &[(&str, &str)] = &[
        (
            "is valid for scheduling",
            "usable (deleting, invisible, not ready)",
        ),
        (
            "seed selector of 'CloudProfile'",
            "CloudProfile seed selector",
        ),
        ("seed selector of 'Shoot'", "shoot seed selector"),
        ("has a matching provider", "provider"),
        ("at least 3 zones", "3 zones for a zonal control plane"),
        ("zone overlap", "zone selection Enforce"),
        ("access restrictions", "access restrictions"),
        ("support the domain", "default domain"),
        ("enabled shoot reconciliations", "emergency stop"),
        ("invalid networks", "candidates: networks"),
        ("taints", "candidates: taints"),
        ("capacity", "candidates: capacity"),
        ("no matching seed candidate", "strategy: no candidate"),
        (
            "Wrong format in region ConfigMap",
            "region ConfigMap malformed",
        ),
        ("not found", "object not found"),
        ("label selector conversion failed", "selector malformed"),
    ];
    KINDS
        .iter()
        .find(|(text, _)| e.contains(text))
        .map_or("other", |(_, k)| k)
}

/// Counters of one run.
#[derive(Default)]
struct Tally {
    landscapes: u64,
    decisions: u64,
    agreements: u64,
    ties: u64,
    by_strategy: BTreeMap<String, u64>,
    upstream_errors: BTreeMap<&'static str, u64>,
    our_errors: BTreeMap<&'static str, u64>,
    rejected: BTreeMap<&'static str, u64>,
    explained: BTreeMap<&'static str, u64>,
    differences: BTreeMap<&'static str, u64>,
    /// the first landscapes with a difference: generator seed, differences
    failures: Vec<(u64, Vec<Difference>)>,
}

/// Decides a landscape both ways; returns our run, upstream's answer and the differences no
/// rule explains (those a rule explains are counted in `explained`).
fn check(
    strategy: &str,
    objects: &[Value],
    reference: &mut Reference,
    explained: &mut BTreeMap<&'static str, u64>,
) -> (OurRun, Answer, Vec<Difference>) {
    let ours = run_ours(objects, &profile(strategy));
    let order = ours
        .decisions
        .iter()
        .map(|(shoot, explain, _)| Step {
            shoot: shoot.clone(),
            bind: match explain {
                Ours::Seed(s) => Some(s.clone()),
                Ours::Fails(..) => None,
            },
        })
        .collect();
    let answer = reference.ask(&Request {
        strategy,
        objects,
        order,
    });
    let diffs = compare(objects, &ours, &answer, explained);
    (ours, answer, diffs)
}

/// The landscape of generator seed `seed` with every object left out whose absence keeps a
/// difference of the same cause: a minimal case to read, and to keep under `tests/upstream/`.
fn shrink(seed: u64, reference: &mut Reference) -> String {
    let generated = generate::generate(seed);
    let mut ignored = BTreeMap::new();
    let (_, _, first) = check(
        generated.strategy,
        &generated.objects,
        reference,
        &mut ignored,
    );
    let Some(cause) = first.first().map(|d| d.cause) else {
        return String::new();
    };
    let mut objects = generated.objects;
    let mut i = objects.len();
    while i > 0 {
        i -= 1;
        let mut fewer = objects.clone();
        fewer.remove(i);
        let (_, _, diffs) = check(generated.strategy, &fewer, reference, &mut ignored);
        if diffs.iter().any(|d| d.cause == cause) {
            objects = fewer;
        }
    }
    // a case of tests/upstream/ without its `expect`, which says what the product should do
    let case = serde_json::json!({
        "upstream": {
            "file": "pkg/scheduler/controller/shoot/reconciler.go",
            "test": format!("DetermineSeed on generator seed {seed} (tests/reference)"),
        },
        "note": format!("generator seed {seed} of tests/reference/generate.rs, shrunk: {cause}"),
        "strategy": generated.strategy,
        "objects": objects,
    });
    serde_yaml_ng::to_string(&case).expect("yaml")
}

fn run_one(seed: u64, reference: &mut Reference, tally: &mut Tally) {
    let generated = generate::generate(seed);
    let (ours, answer, diffs) = check(
        generated.strategy,
        &generated.objects,
        reference,
        &mut tally.explained,
    );
    tally.landscapes += 1;
    for ((_, explain, _), up) in ours.decisions.iter().zip(&answer.decisions) {
        tally.decisions += 1;
        if !diffs.iter().any(|d| d.shoot == up.shoot) {
            tally.agreements += 1;
        }
        match (&up.seed, &up.error) {
            (Some(_), _) => {
                *tally
                    .by_strategy
                    .entry(generated.strategy.to_string())
                    .or_default() += 1;
                if up.ties.len() > 1 {
                    tally.ties += 1;
                }
            }
            (_, Some(e)) => {
                *tally
                    .upstream_errors
                    .entry(upstream_error_kind(e))
                    .or_default() += 1
            }
            _ => *tally.upstream_errors.entry("panic").or_default() += 1,
        }
        if let Ours::Fails(kind, _) = explain {
            *tally.our_errors.entry(kind).or_default() += 1;
        }
    }
    for (stage, n) in &ours.rejected {
        *tally.rejected.entry(stage).or_default() += n;
    }
    for d in &diffs {
        *tally.differences.entry(d.cause).or_default() += 1;
    }
    if !diffs.is_empty() && tally.failures.len() < 20 {
        tally.failures.push((seed, diffs));
    }
}

fn merge<K: Ord + Clone>(into: &mut BTreeMap<K, u64>, from: &BTreeMap<K, u64>) {
    for (k, v) in from {
        *into.entry(k.clone()).or_default() += v;
    }
}

fn table(title: &str, rows: &BTreeMap<impl std::fmt::Display, u64>) -> String {
    let mut s = format!("\n| {title} | count |\n|---|---:|\n");
    for (k, v) in rows {
        s.push_str(&format!("| {k} | {v} |\n"));
    }
    if rows.is_empty() {
        s.push_str("| (none) | 0 |\n");
    }
    s
}

#[test]
fn generated_landscapes_decide_as_upstreams_own_code_in_both_modes() {
    let n = env_number("REFERENCE_LANDSCAPES", 2_000);
    let first = env_number("REFERENCE_SEED", 0);
    let program = reference_program();
    let started = Instant::now();
    // one reference program per core
    let workers = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(4) as u64;
    let total = Mutex::new(Tally::default());
    let done = AtomicU64::new(0);
    std::thread::scope(|scope| {
        for w in 0..workers {
            let total = &total;
            let done = &done;
            let program = &program;
            scope.spawn(move || {
                let mut reference = Reference::start(program);
                let mut tally = Tally::default();
                let mut seed = first + w;
                while seed < first + n {
                    run_one(seed, &mut reference, &mut tally);
                    seed += workers;
                    let done = done.fetch_add(1, Ordering::Relaxed) + 1;
                    if done.is_multiple_of(10_000) {
                        eprintln!(
                            "{done}/{n} landscapes in {:.0} s",
                            started.elapsed().as_secs_f64()
                        );
                    }
                }
                let mut t = total.lock().unwrap();
                t.landscapes += tally.landscapes;
                t.decisions += tally.decisions;
                t.agreements += tally.agreements;
                t.ties += tally.ties;
                merge(&mut t.by_strategy, &tally.by_strategy);
                merge(&mut t.upstream_errors, &tally.upstream_errors);
                merge(&mut t.our_errors, &tally.our_errors);
                merge(&mut t.rejected, &tally.rejected);
                merge(&mut t.explained, &tally.explained);
                merge(&mut t.differences, &tally.differences);
                t.failures.extend(tally.failures);
            });
        }
    });
    let t = total.into_inner().unwrap();
    let mut report = format!(
        "\n| landscapes | decisions | agreements | ties | differences | decisions a rule explains | seconds |\n\
         |---:|---:|---:|---:|---:|---:|---:|\n| {} | {} | {} | {} | {} | {} | {:.1} |\n",
        t.landscapes,
        t.decisions,
        t.agreements,
        t.ties,
        t.differences.values().sum::<u64>(),
        t.explained.values().sum::<u64>(),
        started.elapsed().as_secs_f64()
    );
    report.push_str(&table("upstream placed, by strategy", &t.by_strategy));
    report.push_str(&table(
        "upstream failed, by filter or step",
        &t.upstream_errors,
    ));
    report.push_str(&table("we failed, by kind", &t.our_errors));
    report.push_str(&table(
        "seeds rejected here, by stage (explain)",
        &t.rejected,
    ));
    report.push_str(&table("differences explained, by rule", &t.explained));
    report.push_str(&table("differences, by cause", &t.differences));
    println!("{report}");
    let mut failures = t.failures;
    failures.sort_by_key(|f| f.0);
    // the first landscape with a difference, shrunk, for a case under tests/upstream/
    let mut shrunk = String::new();
    if let Some((seed, _)) = failures.first() {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("reference");
        std::fs::create_dir_all(&dir).expect("a directory for shrunk landscapes");
        let path = dir.join(format!("seed-{seed}.yaml"));
        let text = shrink(*seed, &mut Reference::start(&program));
        std::fs::write(&path, text).expect("the shrunk landscape is written");
        shrunk = format!(
            "\nshrunk landscape of generator seed {seed}: {}",
            path.display()
        );
    }
    let listed: Vec<String> = failures
        .iter()
        .map(|(seed, diffs)| {
            let lines: Vec<String> = diffs
                .iter()
                .map(|d| format!("    {} {}: {}", d.cause, d.shoot, d.detail))
                .collect();
            format!("generator seed {seed}:\n{}", lines.join("\n"))
        })
        .collect();
    assert!(
        listed.is_empty(),
        "differences from upstream (first landscapes; REFERENCE_SEED=<seed> REFERENCE_LANDSCAPES=1 repeats one):\n{}{shrunk}",
        listed.join("\n")
    );
    assert_eq!(t.landscapes, n);
}

/// Each rule names a row of the table of deliberate differences.
#[test]
fn every_rule_names_a_row_of_the_differences_table() {
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/concepts/scheduler.md"),
    )
    .expect("docs/concepts/scheduler.md");
    let table = doc
        .split("## Differences from upstream")
        .nth(1)
        .expect("a section of differences");
    for rule in RULES {
        assert!(
            table
                .lines()
                .any(|l| l.starts_with(&format!("| {}", rule.row))),
            "rule {:?}: no row of the differences table starts with {:?}",
            rule.name,
            rule.row
        );
    }
}

/// The timing mode serves the landscape from controller-runtime's informer cache and decides
/// as the fake-client mode does: every seed it picks is one the fake-client mode picks or ties
/// with, every shoot that fails there fails here, and no read goes past the cache.
#[test]
fn timing_mode_reads_through_the_informer_cache_and_decides_as_the_fake_client_mode() {
    use support::landscape::{self, GridSpec};
    use support::memory::with_type_meta;
    use support::upstream;

    let spec = GridSpec {
        seeds: 10,
        shoots: 200,
        rng_seed: 42,
    };
    let grid = landscape::grid(spec, 30);
    let objects = upstream::objects(spec);
    // the objects are the grid's landscape: the same seeds, the same usage per seed
    let mut loaded = gardener_scheduler::snapshot::Snapshot::new();
    for o in &objects {
        if o["kind"] == "Shoot" {
            loaded.upsert_shoot(&serde_json::from_value(o.clone()).expect("a shoot"));
        }
    }
    let seeds: Vec<&Value> = objects.iter().filter(|o| o["kind"] == "Seed").collect();
    assert_eq!(seeds.len(), grid.seed_names.len());
    for name in &grid.seed_names {
        assert_eq!(
            loaded.usage().shoots_on(name),
            grid.snapshot.usage().shoots_on(name),
            "{name}"
        );
    }
    let pending: Vec<Value> = grid.pending.iter().map(with_type_meta).collect();
    let program = reference_program();
    let time = upstream::Time {
        target_ms: 0.0,
        min: pending.len(),
        max: pending.len(),
        compare: Vec::new(),
    };
    let timed = upstream::time_upstream(&program, "SameRegion", &objects, &pending, &time)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(timed.decisions.len(), pending.len());
    assert_eq!(timed.cpu_ns.len(), pending.len());
    assert_eq!(timed.wall_ns.len(), pending.len());
    assert!(
        timed.reader.contains("informer cache"),
        "reader: {}",
        timed.reader
    );
    for kind in ["Seed", "Shoot", "CloudProfile", "Project"] {
        assert!(
            timed
                .informers
                .iter()
                .any(|i| i.ends_with(&format!(".{kind}"))),
            "no informer serves {kind}: {:?}",
            timed.informers
        );
    }
    assert_eq!(
        timed.backing_reads, 0,
        "reads went past the informer cache while deciding"
    );

    // the fake-client mode on the same landscape, the pending shoots among the objects, unbound
    let mut all = objects.clone();
    all.extend(pending.iter().cloned());
    let order = timed
        .decisions
        .iter()
        .map(|d| Step {
            shoot: d.shoot.clone(),
            bind: None,
        })
        .collect();
    let answer = Reference::start(&program).ask(&Request {
        strategy: "SameRegion",
        objects: &all,
        order,
    });
    assert!(answer.invalid.is_none(), "{:?}", answer.invalid);
    assert_eq!(answer.decisions.len(), timed.decisions.len());
    let mut placed = 0;
    for (cached, fake) in timed.decisions.iter().zip(&answer.decisions) {
        assert_eq!(cached.shoot, fake.shoot);
        match (&cached.seed, &fake.seed) {
            (Some(c), Some(_)) => {
                assert!(
                    fake.ties.contains(c),
                    "{}: the cache-backed client picked {c}, the fake client {:?} (ties {:?})",
                    cached.shoot,
                    fake.seed,
                    fake.ties
                );
                placed += 1;
            }
            (None, None) => assert_eq!(
                cached.panic.is_some(),
                fake.panic.is_some(),
                "{}: {cached:?} / {fake:?}",
                cached.shoot
            ),
            _ => panic!(
                "{}: the cache-backed client {cached:?}, the fake client {fake:?}",
                cached.shoot
            ),
        }
    }
    assert!(
        placed > 0,
        "no pending shoot was placed: {:?}",
        timed.decisions
    );
    println!(
        "timing mode: {placed}/{} placed as the fake-client mode places, informers {:?}, cache filled in {:.1} ms",
        timed.decisions.len(),
        timed.informers,
        timed.fill_ms
    );
}

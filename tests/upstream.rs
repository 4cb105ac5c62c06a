//! Upstream Gardener's own scheduler test cases, carried as data: every file under
//! `tests/upstream/` holds one case (the manifests, the configuration and the outcome upstream's
//! test expects, with the upstream file and test it comes from; see `tests/upstream/README.md`).
//! Each case is decided in both modes of the pipeline, explain (`schedule`) and fast (`decide`),
//! and both must give the expected outcome (and every filter's fast answer must be its verdict);
//! where upstream's test checks the meaning of an error, explain mode's rejections must name the
//! stage that means it.
//!
//! A case marked `pending` is still run, but its outcome only printed: it waits for a change of
//! behaviour that the case names.

#[path = "support/cases.rs"]
mod cases;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use gardener_scheduler::api::object_key;
use gardener_scheduler::compile::load_str;
use gardener_scheduler::profile::Profile;
use gardener_scheduler::schedule::{
    Decision, FitError, check_disagreements, decide, decide_scores, schedule,
};
use gardener_scheduler::simulate::{Landscape, is_pending, snapshot_of};
use gardener_scheduler::snapshot::Snapshot;
use serde::Deserialize;

use cases::{fit_kind, subdirectories};

/// One case file.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    upstream: Source,
    /// `schedulers.shoot.candidateDeterminationStrategy` (default: upstream's default,
    /// `SameRegion`).
    strategy: Option<String>,
    /// The shoot decided, `namespace/name` (default: the only shoot without `spec.seedName`).
    shoot: Option<String>,
    /// The manifests, read as gardener-apiserver would store them (upstream's defaults applied).
    objects: Vec<serde_yaml_ng::Value>,
    expect: Expect,
    /// Where the project deliberately does otherwise than upstream's test expects: `expect` then
    /// holds the documented behaviour, and this says what upstream does and where it is
    /// documented.
    difference: Option<String>,
    /// The outcome upstream expects, not yet this project's: the case is run and its outcome
    /// printed, never failed.
    pending: Option<String>,
    /// How the case's inputs were derived from upstream's test, when not taken one to one.
    note: Option<String>,
}

/// The upstream test a case carries.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Source {
    /// Path in gardener/gardener.
    file: String,
    /// The `Describe`/`Context` texts and the `It`/`Entry` text, joined by ` / `.
    test: String,
}

/// What the decision must be.
#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct Expect {
    /// Whether the shoot is one the scheduler decides at all (unset: it must be).
    considered: Option<bool>,
    /// The seed chosen, in both modes.
    seed: Option<String>,
    /// Exactly the seeds left after every stage (explain mode's ranking); the chosen seed is one
    /// of them.
    candidates: Option<Vec<String>>,
    /// The shoot fits no seed, or cannot be decided.
    fails: Option<Failure>,
    /// Exactly the seeds some stage rejected, each with that stage (explain mode).
    rejected: Option<BTreeMap<String, String>>,
    /// Text the reason of a rejected seed contains, one or several pieces (explain mode).
    reasons: Option<BTreeMap<String, Texts>>,
    /// The number of shoots each candidate holds, as upstream counts its usage: the raw value
    /// of upstream's one priority, `ShootCount`, in both modes.
    usage: Option<BTreeMap<String, f64>>,
}

/// One text, or several.
#[derive(Deserialize)]
#[serde(untagged)]
enum Texts {
    One(String),
    Many(Vec<String>),
}

impl Texts {
    fn all(&self) -> &[String] {
        match self {
            Texts::One(t) => std::slice::from_ref(t),
            Texts::Many(ts) => ts,
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Failure {
    /// `noFit` (every seed rejected), `invalidShoot`, `invalidRegionConfig`.
    kind: String,
    /// Text the one-line failure message contains.
    message: Option<String>,
}

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-01T00:00:00Z")
        .unwrap()
        .to_utc()
}

fn cases_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/upstream")
}

/// Every case file, in path order.
fn case_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.expect("directory entry").path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            case_files(&path, out);
        } else if path.extension().is_some_and(|x| x == "yaml") {
            out.push(path);
        }
    }
}

fn profile(case: &Case) -> Result<Profile, String> {
    let strategy = case.strategy.as_deref().unwrap_or("SameRegion");
    let text = format!("schedulers:\n  shoot:\n    candidateDeterminationStrategy: {strategy}\n");
    let cfg = load_str(&text).map_err(|e| format!("configuration: {e}"))?;
    Profile::from_config("default", &cfg.config.schedulers.shoot)
        .map_err(|e| format!("profile: {e:?}"))
}

fn landscape(path: &Path, case: &Case) -> Result<Landscape, String> {
    let mut text = String::new();
    for object in &case.objects {
        text.push_str("---\n");
        text.push_str(&serde_yaml_ng::to_string(object).map_err(|e| e.to_string())?);
    }
    let mut landscape = Landscape::default();
    landscape
        .add_text(path, &text)
        .map_err(|e| format!("manifests: {e}"))?;
    if let Some(s) = landscape.skipped.first() {
        return Err(format!("an object was not read: {s}"));
    }
    Ok(landscape)
}

/// The seeds a failure or a decision lists as rejected in explain mode, with their stages.
fn stages(rejected: &[gardener_scheduler::schedule::Rejection]) -> BTreeMap<String, String> {
    rejected
        .iter()
        .map(|r| (r.seed.to_string(), r.stage.to_string()))
        .collect()
}

fn check_rejections(
    expect: &Expect,
    rejected: &[gardener_scheduler::schedule::Rejection],
    problems: &mut Vec<String>,
) {
    if let Some(want) = &expect.rejected {
        let got = stages(rejected);
        if &got != want {
            problems.push(format!("explain: rejected {got:?}, expected {want:?}"));
        }
    }
    let pieces = expect
        .reasons
        .iter()
        .flatten()
        .flat_map(|(seed, texts)| texts.all().iter().map(move |t| (seed, t)));
    for (seed, text) in pieces {
        match rejected.iter().find(|r| &*r.seed == seed) {
            Some(r) if r.reason.to_string().contains(text.as_str()) => {}
            Some(r) => problems.push(format!(
                "explain: {seed} rejected by {} with {:?}, expected it to say {text:?}",
                r.stage,
                r.reason.to_string()
            )),
            None => problems.push(format!("explain: {seed} not rejected, expected {text:?}")),
        }
    }
}

/// Checks each candidate's shoot count in both modes against `want`.
fn check_usage(
    want: &BTreeMap<String, f64>,
    explain: &Decision,
    fast: &[(String, f64)],
    problems: &mut Vec<String>,
) {
    let got: BTreeMap<String, f64> = explain
        .ranking
        .iter()
        .filter_map(|s| {
            let p = s.priorities.iter().find(|p| p.name == "ShootCount")?;
            Some((s.seed.to_string(), p.raw))
        })
        .collect();
    if &got != want {
        problems.push(format!("explain: shoot counts {got:?}, expected {want:?}"));
    }
    let fast: BTreeMap<String, f64> = fast.iter().cloned().collect();
    if &fast != want {
        problems.push(format!("fast: shoot counts {fast:?}, expected {want:?}"));
    }
}

/// Checks the outcome of both modes; returns every mismatch.
fn check_outcome(
    expect: &Expect,
    explain: Result<Decision, FitError>,
    fast: Result<Decision, FitError>,
) -> Vec<String> {
    let mut problems = Vec::new();
    match (&expect.fails, &explain, &fast) {
        (Some(want), Err(explain), Err(fast)) => {
            for (mode, e) in [("explain", explain), ("fast", fast)] {
                if fit_kind(e) != want.kind {
                    problems.push(format!(
                        "{mode}: failed with {} ({e}), expected {}",
                        fit_kind(e),
                        want.kind
                    ));
                }
                if let Some(m) = &want.message
                    && !e.to_string().contains(m.as_str())
                {
                    problems.push(format!(
                        "{mode}: message {:?} does not say {m:?}",
                        e.to_string()
                    ));
                }
            }
            if *fast != explain.clone().counted_only() {
                problems.push(format!(
                    "fast mode's error {fast:?} is not explain mode's {explain:?}"
                ));
            }
            let rejected = match explain {
                FitError::NoFit { rejected, .. } => rejected.as_slice(),
                _ => &[],
            };
            check_rejections(expect, rejected, &mut problems);
        }
        (Some(want), _, _) => problems.push(format!(
            "expected the shoot to fail ({}), explain gave {}, fast gave {}",
            want.kind,
            summary(&explain),
            summary(&fast)
        )),
        (None, Ok(explain), Ok(fast)) => {
            if explain.seed != fast.seed {
                problems.push(format!(
                    "explain chose {}, fast chose {}",
                    explain.seed, fast.seed
                ));
            }
            if let Some(want) = &expect.seed {
                for (mode, d) in [("explain", explain), ("fast", fast)] {
                    if &d.seed != want {
                        problems.push(format!("{mode}: chose {}, expected {want}", d.seed));
                    }
                }
            }
            if let Some(want) = &expect.candidates {
                let got: BTreeSet<&str> = explain.ranking.iter().map(|s| &*s.seed).collect();
                let want_set: BTreeSet<&str> = want.iter().map(String::as_str).collect();
                if got != want_set {
                    problems.push(format!(
                        "explain: candidates {got:?}, expected {want_set:?}"
                    ));
                }
                if !want_set.contains(fast.seed.as_str()) {
                    problems.push(format!(
                        "fast: chose {}, not one of {want_set:?}",
                        fast.seed
                    ));
                }
            }
            check_rejections(expect, &explain.rejected, &mut problems);
        }
        (None, _, _) => problems.push(format!(
            "expected a seed, explain gave {}, fast gave {}",
            summary(&explain),
            summary(&fast)
        )),
    }
    problems
}

fn summary(r: &Result<Decision, FitError>) -> String {
    match r {
        Ok(d) => format!("seed {}", d.seed),
        Err(e) => format!("{} ({e})", fit_kind(e)),
    }
}

/// Every feasible seed's `ShootCount` raw value as fast mode computes it.
fn fast_usage(
    shoot: &gardener_scheduler::api::Shoot,
    snap: &Snapshot,
    profile: &Profile,
) -> Result<Vec<(String, f64)>, String> {
    let k = profile.priorities.len();
    let j = profile
        .priorities
        .iter()
        .position(|p| p.priority.name() == "ShootCount")
        .ok_or("expect.usage needs the priority ShootCount")?;
    let scores = decide_scores(shoot, snap, profile, now()).map_err(|e| format!("fast: {e}"))?;
    Ok(scores
        .seeds
        .iter()
        .enumerate()
        .map(|(i, s)| (s.to_string(), scores.scores[i * k + j].1))
        .collect())
}

/// Runs one case; returns every mismatch with its expectation.
fn run(path: &Path, case: &Case) -> Result<Vec<String>, String> {
    let expect = &case.expect;
    if expect.seed.is_none()
        && expect.candidates.is_none()
        && expect.fails.is_none()
        && expect.considered != Some(false)
    {
        return Err(
            "expect names no outcome (seed, candidates, fails or considered: false)".into(),
        );
    }
    let landscape = landscape(path, case)?;
    let shoot = match &case.shoot {
        Some(key) => landscape
            .shoots
            .iter()
            .find(|s| object_key(&s.metadata) == *key)
            .ok_or_else(|| format!("no shoot {key} among the objects"))?,
        None => {
            let unbound: Vec<_> = landscape
                .shoots
                .iter()
                .filter(|s| s.spec.seed_name.is_none())
                .collect();
            match unbound.as_slice() {
                [one] => *one,
                _ => {
                    return Err(format!(
                        "{} shoots without spec.seedName: name the one decided in `shoot`",
                        unbound.len()
                    ));
                }
            }
        }
    };
    let considered = is_pending(shoot, &["default-scheduler".to_string()]);
    let want_considered = expect.considered.unwrap_or(true);
    if considered != want_considered {
        return Ok(vec![format!(
            "the scheduler {} the shoot, expected it {}",
            if considered {
                "decides"
            } else {
                "leaves alone"
            },
            if want_considered {
                "to decide it"
            } else {
                "to leave it alone"
            }
        )]);
    }
    if !considered {
        return Ok(Vec::new());
    }
    let profile = profile(case)?;
    let snap = snapshot_of(&landscape);
    let explain = schedule(shoot, &snap, &profile, now());
    let fast = decide(shoot, &snap, &profile, now());
    let mut problems = Vec::new();
    if let Ok(found) = check_disagreements(shoot, &snap, &profile, now())
        && !found.is_empty()
    {
        problems.push(format!("fast checks that are not their filter: {found:?}"));
    }
    if let (Some(want), Ok(d)) = (&expect.usage, &explain) {
        check_usage(want, d, &fast_usage(shoot, &snap, &profile)?, &mut problems);
    }
    problems.extend(check_outcome(expect, explain, fast));
    Ok(problems)
}

#[test]
fn upstream_scheduler_cases_decide_as_upstream_expects_in_both_modes() {
    let mut files = Vec::new();
    case_files(&cases_dir(), &mut files);
    let mut failures = Vec::new();
    let mut carried = 0;
    let mut pending = 0;
    for path in &files {
        let name = path
            .strip_prefix(cases_dir())
            .unwrap_or(path)
            .display()
            .to_string();
        let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{name}: {e}"));
        let case: Case = match serde_yaml_ng::from_str(&text) {
            Ok(c) => c,
            Err(e) => {
                failures.push(format!("{name}: {e}"));
                continue;
            }
        };
        let outcome = run(path, &case);
        let mut from = format!("{} {:?}", case.upstream.file, case.upstream.test);
        if let Some(d) = &case.difference {
            from.push_str(&format!("; expects the documented difference: {d}"));
        }
        if let Some(n) = &case.note {
            from.push_str(&format!("; {n}"));
        }
        match (&case.pending, outcome) {
            (Some(why), Ok(problems)) => {
                pending += 1;
                let state = if problems.is_empty() {
                    "now decides as upstream: remove `pending`".to_string()
                } else {
                    problems.join("; ")
                };
                println!("pending {name} ({why}): {state}");
            }
            (Some(why), Err(e)) => {
                pending += 1;
                println!("pending {name} ({why}): {e}");
            }
            (None, Ok(problems)) if problems.is_empty() => carried += 1,
            (None, Ok(problems)) => failures.push(format!(
                "{name} (from {from}):\n    {}",
                problems.join("\n    ")
            )),
            (None, Err(e)) => failures.push(format!("{name} (from {from}): {e}")),
        }
    }
    println!("{carried} upstream cases decided as expected, {pending} pending");
    assert!(
        failures.is_empty(),
        "{} of {} upstream cases fail:\n{}",
        failures.len(),
        files.len(),
        failures.join("\n")
    );
    assert!(!files.is_empty(), "no case under tests/upstream/");
}

/// The README's table of carried cases counts the files of each directory.
#[test]
fn the_readme_counts_the_cases_of_each_directory() {
    let readme = std::fs::read_to_string(cases_dir().join("README.md")).expect("README.md");
    let mut dirs = Vec::new();
    for line in readme.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let Some(dir) = cells
            .get(1)
            .and_then(|c| c.strip_prefix('`')?.strip_suffix("/`"))
        else {
            continue;
        };
        let carried: usize = cells[4]
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("README row of {dir}: no count of carried cases"));
        let mut files = Vec::new();
        case_files(&cases_dir().join(dir), &mut files);
        assert_eq!(
            files.len(),
            carried,
            "README says {carried} cases in {dir}/, there are {}",
            files.len()
        );
        dirs.push(dir.to_string());
    }
    let on_disk = subdirectories(&cases_dir(), "tests/upstream");
    dirs.sort();
    assert_eq!(
        dirs, on_disk,
        "every directory of cases has its row in the README"
    );
}

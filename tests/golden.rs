//! Golden scenarios: manifests replayed through the real `gardener-scheduler simulate` binary and
//! compared, byte for byte, with committed output.
//!
//! Each directory under `tests/golden/` holds a `cases.yaml`:
//!
//! ```yaml
//! files: [manifests.yaml]        # -f arguments, relative to the scenario directory
//! cases:
//! - name: scored                 # expected output: scored.table.txt and scored.json
//!   config: scored.config.yaml   # --config, relative to the scenario directory (optional)
//!   explain: [ns/name]           # also scored.explain.<ns>.<name>.txt
//! ```
//!
//! `UPDATE_GOLDEN=1 cargo test --test golden` rewrites the expected files; read the diff before
//! committing it.

#[path = "support/cases.rs"]
mod cases;

use std::path::{Path, PathBuf};
use std::process::Command;

use serde::Deserialize;
use serde_json::Value;

use cases::subdirectories;

/// Every run uses this instant, so that output never depends on the clock.
const NOW: &str = "2026-12-01T00:00:00Z";

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Scenario {
    files: Vec<String>,
    cases: Vec<Case>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Case {
    name: String,
    config: Option<String>,
    #[serde(default)]
    explain: Vec<String>,
}

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn golden_dir() -> PathBuf {
    root().join("tests/golden")
}

/// Runs `simulate` from the repository root (matrix files in configs are relative to it).
fn simulate(dir: &Path, scenario: &Scenario, case: &Case, extra: &[&str]) -> String {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_gardener-scheduler"));
    cmd.current_dir(root()).args(["simulate", "--now", NOW]);
    if let Some(c) = &case.config {
        cmd.arg("--config").arg(dir.join(c));
    }
    for f in &scenario.files {
        cmd.arg("-f").arg(dir.join(f));
    }
    cmd.args(extra);
    let out = cmd.output().expect("run gardener-scheduler");
    assert!(
        out.status.success(),
        "{} {}: simulate {extra:?} failed: {}",
        dir.display(),
        case.name,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).expect("UTF-8 output")
}

/// Compares with (or, with UPDATE_GOLDEN set, rewrites) one expected file; returns a mismatch.
fn check(expected: &Path, got: &str) -> Option<String> {
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(expected, got).expect("write expected output");
        return None;
    }
    let want = std::fs::read_to_string(expected).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (run with UPDATE_GOLDEN=1 to create it)",
            expected.display()
        )
    });
    if want == got {
        return None;
    }
    let line = want
        .lines()
        .zip(got.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| want.lines().count().min(got.lines().count()));
    Some(format!(
        "{} differs from line {}:\n  want: {:?}\n  got:  {:?}",
        expected.display(),
        line + 1,
        want.lines().nth(line).unwrap_or("<end>"),
        got.lines().nth(line).unwrap_or("<end>")
    ))
}

/// Runs every case of a scenario, compares all outputs, and returns the JSON of each case.
fn run_scenario(name: &str) -> Vec<(String, Value)> {
    let dir = golden_dir().join(name);
    let spec = std::fs::read_to_string(dir.join("cases.yaml")).expect("cases.yaml");
    let scenario: Scenario = serde_yaml_ng::from_str(&spec).expect("cases.yaml parses");
    let mut mismatches = Vec::new();
    let mut results = Vec::new();
    for case in &scenario.cases {
        let table = simulate(&dir, &scenario, case, &[]);
        mismatches.extend(check(&dir.join(format!("{}.table.txt", case.name)), &table));
        let json = simulate(&dir, &scenario, case, &["-o", "json"]);
        mismatches.extend(check(&dir.join(format!("{}.json", case.name)), &json));
        for shoot in &case.explain {
            let text = simulate(&dir, &scenario, case, &["--explain", shoot]);
            let file = format!("{}.explain.{}.txt", case.name, shoot.replace('/', "."));
            mismatches.extend(check(&dir.join(file), &text));
        }
        results.push((
            case.name.clone(),
            serde_json::from_str(&json).expect("JSON output"),
        ));
    }
    assert!(
        mismatches.is_empty(),
        "golden output of {name} changed:\n{}",
        mismatches.join("\n")
    );
    results
}

/// The seed chosen for `shoot` in one case's JSON (`None`: unschedulable).
fn seed_of(results: &[(String, Value)], case: &str, shoot: &str) -> Option<String> {
    let (_, json) = results.iter().find(|(n, _)| n == case).expect("case");
    let d = json["decisions"]
        .as_array()
        .expect("decisions")
        .iter()
        .find(|d| d["shoot"] == shoot)
        .unwrap_or_else(|| panic!("{case}: no decision for {shoot}"));
    d["seed"].as_str().map(str::to_string)
}

/// How many of the scheduled shoots of a case went to each seed.
fn placements(
    results: &[(String, Value)],
    case: &str,
) -> std::collections::BTreeMap<String, usize> {
    let (_, json) = results.iter().find(|(n, _)| n == case).expect("case");
    let mut m = std::collections::BTreeMap::new();
    for d in json["decisions"].as_array().expect("decisions") {
        if let Some(s) = d["seed"].as_str() {
            *m.entry(s.to_string()).or_default() += 1;
        }
    }
    m
}

#[test]
fn every_golden_scenario_is_run() {
    let dirs = subdirectories(&golden_dir(), "tests/golden");
    assert_eq!(
        dirs,
        vec![
            "binpack-vs-spread",
            "eu-residency",
            "example-landscape",
            "latency-nearest-region",
            "project-spread"
        ]
    );
}

#[test]
fn latency_places_a_shoot_without_local_seeds_on_the_nearest_region() {
    let r = run_scenario("latency-nearest-region");
    let ca = "garden-shop/storefront-ca";
    assert_eq!(
        seed_of(&r, "same-region", ca),
        None,
        "upstream SameRegion leaves it pending"
    );
    assert_eq!(
        seed_of(&r, "minimal-distance", ca).as_deref(),
        Some("aws-euc1"),
        "Levenshtein picks Frankfurt"
    );
    assert_eq!(
        seed_of(&r, "scored-latency", ca).as_deref(),
        Some("aws-use1"),
        "latency picks Virginia"
    );
    assert_eq!(
        seed_of(&r, "scored-latency", "garden-shop/storefront-ie").as_deref(),
        Some("aws-euc1")
    );
}

#[test]
fn eu_residency_keeps_eu_shoots_in_the_eu_unless_they_opt_out() {
    let r = run_scenario("eu-residency");
    let checkout = "garden-shop/checkout";
    assert_eq!(
        seed_of(&r, "unfiltered", checkout).as_deref(),
        Some("aws-euc2"),
        "nearest is Zurich, outside the EU"
    );
    assert_eq!(
        seed_of(&r, "eu-only", checkout).as_deref(),
        Some("aws-euc1"),
        "the residency filter keeps Milan's shoot in the EU: Frankfurt"
    );
    assert_eq!(
        seed_of(&r, "eu-only", "garden-shop/analytics").as_deref(),
        Some("gcp-euw4"),
        "Frankfurt is full: the EU seed of another provider, not nearer Zurich"
    );
    assert_eq!(
        seed_of(&r, "eu-only", "garden-ops/tools").as_deref(),
        Some("aws-euc2"),
        "the shoot's annotation opts out"
    );
    assert_eq!(
        seed_of(&r, "eu-only", "garden-shop/mirror"),
        None,
        "every seed is farther than maxLatencyMs from Mumbai"
    );
}

#[test]
fn project_anti_affinity_spreads_a_project_over_seeds_and_regions() {
    let r = run_scenario("project-spread");
    // 7 shoots of project shop on 3 seeds: at most ceil(7/3) = 3 per seed, every seed used.
    let spread = placements(&r, "spread-seeds");
    assert_eq!(spread.values().sum::<usize>(), 7);
    assert_eq!(spread.len(), 3, "{spread:?}");
    assert!(spread.values().all(|&n| n <= 3), "{spread:?}");
    // Upstream fills the two empty seeds and leaves the busy one alone.
    assert!(!placements(&r, "upstream").contains_key("busy-1"));
    // Region topology: at most ceil(7/2) = 4 per region.
    let regions = placements(&r, "spread-regions");
    let eu_central = regions.get("fra-1").copied().unwrap_or(0);
    assert!((3..=4).contains(&eu_central), "{regions:?}");
}

#[test]
fn resource_fit_packs_or_spreads_by_strategy() {
    let r = run_scenario("binpack-vs-spread");
    let spread = placements(&r, "spread");
    let pack = placements(&r, "binpack");
    assert!(
        spread.contains_key("empty"),
        "spreading uses the empty seed: {spread:?}"
    );
    assert!(
        !pack.contains_key("empty"),
        "packing keeps the empty seed free: {pack:?}"
    );
}

#[test]
fn example_landscape_under_upstream_and_weighted_profiles() {
    let r = run_scenario("example-landscape");
    let ca = "garden-webshop/storefront-ca";
    assert_eq!(seed_of(&r, "upstream", ca), None);
    let weighted = seed_of(&r, "weighted", ca).expect("weighted profile places storefront-ca");
    assert!(
        weighted.starts_with("aws-us"),
        "nearest region us-east-1: {weighted}"
    );
}

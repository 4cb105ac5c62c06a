//! `simulate --compare` and `--replay` on the example landscape, and their usage errors. (The
//! live read is tested against a real API server in tests/e2e/whatif.rs.)

use std::collections::BTreeMap;

use serde_json::Value;

#[path = "support/cli.rs"]
mod cli_support;
use cli_support::{bin, run};

const WEIGHTED: &str = "example/20-componentconfig-weighted.yaml";
const DEFAULT: &str = "example/20-componentconfig-gardener-scheduler.yaml";
const NOW: &str = "2026-11-30T12:00:00Z";

fn simulate(args: &[&str]) -> (i32, String, String) {
    run(bin().arg("simulate").args(["--now", NOW]).args(args))
}

fn json(args: &[&str]) -> Value {
    let (code, out, err) = simulate(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

/// shoot -> seed (None: unschedulable), from a plain `-o json` run.
fn placements(config: &str, replay: bool) -> BTreeMap<String, Option<String>> {
    let mut args = vec!["-f", "example/landscape", "--config", config, "-o", "json"];
    if replay {
        args.push("--replay");
    }
    json(&args)["decisions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["shoot"].as_str().unwrap().to_string(),
                d["seed"].as_str().map(str::to_string),
            )
        })
        .collect()
}

/// The comparison agrees with two separate runs: exactly the shoots they place differently,
/// with the seeds each run chose, and the same placed/unschedulable counts.
fn check_against_separate_runs(replay: bool) {
    let old = placements(DEFAULT, replay);
    let new = placements(WEIGHTED, replay);
    let mut args = vec![
        "-f",
        "example/landscape",
        "--config",
        WEIGHTED,
        "--compare",
        DEFAULT,
        "-o",
        "json",
    ];
    if replay {
        args.push("--replay");
    }
    let c = json(&args);
    let got: BTreeMap<String, (Option<String>, Option<String>)> = c["differences"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["shoot"].as_str().unwrap().to_string(),
                (
                    d["old"]["seed"].as_str().map(str::to_string),
                    d["new"]["seed"].as_str().map(str::to_string),
                ),
            )
        })
        .collect();
    let want: BTreeMap<String, (Option<String>, Option<String>)> = new
        .iter()
        .filter(|(shoot, seed)| old.get(*shoot) != Some(seed))
        .map(|(shoot, seed)| (shoot.clone(), (old[shoot].clone(), seed.clone())))
        .collect();
    assert!(!want.is_empty(), "the two configurations differ somewhere");
    assert_eq!(got, want);
    for (summary, run) in [(&c["old"], &old), (&c["new"], &new)] {
        let placed = run.values().filter(|s| s.is_some()).count();
        assert_eq!(summary["placed"], placed);
        assert_eq!(summary["unschedulable"], run.len() - placed);
    }
    // latency is known only where LatencyDistance is configured (the weighted file)
    assert!(c["old"]["latency"].is_null());
    let l = &c["new"]["latency"];
    assert!(
        l["meanMs"].as_f64().unwrap() <= l["p95Ms"].as_f64().unwrap(),
        "{l}"
    );
    // every difference says where the old seed stood under the new configuration
    for d in c["differences"].as_array().unwrap() {
        if d["old"]["seed"].is_string() && d["new"].is_object() {
            let s = d["oldSeedUnderNew"].as_str().unwrap();
            assert!(s.starts_with(d["old"]["seed"].as_str().unwrap()), "{d}");
        }
    }
}

#[test]
fn compare_prints_exactly_the_shoots_two_separate_runs_place_differently() {
    check_against_separate_runs(false);
}

#[test]
fn compare_with_replay_decides_the_whole_landscape_under_both() {
    check_against_separate_runs(true);
}

#[test]
fn compare_table_lists_old_to_new_and_a_summary_per_configuration() {
    let (code, out, err) = simulate(&[
        "-f",
        "example/landscape",
        "--config",
        WEIGHTED,
        "--compare",
        DEFAULT,
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("placed differently (old -> new):"), "{out}");
    assert!(out.contains("\n  under new, old seed "), "{out}");
    for side in ["old", "new"] {
        let at = out
            .find(&format!("\nSummary ({side}):\n  placed "))
            .unwrap();
        let block = &out[at..];
        assert!(block.contains("\n  utilisation: min "), "{block}");
        assert!(block.contains("\n  shoots per region: "), "{block}");
    }
    assert!(out.contains("latency: mean "), "{out}");

    // the same configuration on both sides: nothing differs
    let (code, out, _) = simulate(&[
        "-f",
        "example/landscape",
        "--config",
        DEFAULT,
        "--compare",
        DEFAULT,
    ]);
    assert_eq!(code, 0);
    assert!(out.starts_with("No shoot is placed differently"), "{out}");
}

#[test]
fn replay_decides_the_bound_shoots_again_in_creation_order() {
    let pending = placements(DEFAULT, false);
    let replayed = json(&[
        "-f",
        "example/landscape",
        "--config",
        DEFAULT,
        "-o",
        "json",
        "--replay",
    ]);
    let decisions = replayed["decisions"].as_array().unwrap();
    assert!(decisions.len() > pending.len());
    for shoot in pending.keys() {
        assert!(
            decisions.iter().any(|d| d["shoot"] == shoot.as_str()),
            "{shoot} is decided in the replay too"
        );
    }
    // creation order: read the shoots' timestamps from the manifests
    let text = std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("example/landscape/20-shoots.yaml"),
    )
    .unwrap();
    let mut created = BTreeMap::new();
    for doc in serde_yaml_ng::Deserializer::from_str(&text) {
        let v: Value = serde::Deserialize::deserialize(doc).unwrap();
        if v.is_null() {
            continue;
        }
        let key = format!(
            "{}/{}",
            v["metadata"]["namespace"].as_str().unwrap(),
            v["metadata"]["name"].as_str().unwrap()
        );
        created.insert(
            key,
            v["metadata"]["creationTimestamp"]
                .as_str()
                .map(str::to_string),
        );
    }
    let order: Vec<(Option<String>, String)> = decisions
        .iter()
        .map(|d| {
            let shoot = d["shoot"].as_str().unwrap().to_string();
            (created.get(&shoot).cloned().flatten(), shoot)
        })
        .collect();
    let mut sorted = order.clone();
    sorted.sort();
    assert_eq!(order, sorted, "decided in creation order, then by name");
}

#[test]
fn usage_errors_exit_2() {
    // neither manifests nor the cluster
    let (code, _, err) = simulate(&[]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--filename"), "{err}");
    // a comparison has no YAML form
    let (code, out, err) = simulate(&[
        "-f",
        "example/landscape",
        "--compare",
        DEFAULT,
        "-o",
        "yaml",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(err.contains("--compare: -o yaml is not available"), "{err}");
    // the old configuration must load
    let (code, _, err) = simulate(&[
        "-f",
        "example/landscape",
        "--compare",
        "example/does-not-exist.yaml",
    ]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("does-not-exist.yaml"), "{err}");
    // --compare explains differences itself
    let (code, _, err) = simulate(&[
        "-f",
        "example/landscape",
        "--compare",
        DEFAULT,
        "--explain",
        "garden/metering",
    ]);
    assert_eq!(code, 2, "{err}");
    let (code, _, err) = simulate(&["--live", "--chunk-size", "0"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--chunk-size"), "{err}");
}

/// `-o html` of `--compare`: one row per shoot the JSON comparison lists, each with its
/// old -> new seeds and an expandable explanation, and both summaries.
#[test]
fn compare_html_shows_every_difference_with_its_explanation_and_both_summaries() {
    let base = [
        "-f",
        "example/landscape",
        "--config",
        WEIGHTED,
        "--compare",
        DEFAULT,
    ];
    let v = json(&[&base[..], &["-o", "json"]].concat());
    let (code, html, err) = simulate(&[&base[..], &["-o", "html"]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(html.starts_with("<!DOCTYPE html>"), "{html}");
    assert!(html.contains("<h1>Configuration comparison: old → new</h1>"));
    let diffs = v["differences"].as_array().unwrap();
    assert!(!diffs.is_empty());
    let at = html.find("<h2>Placed differently (").unwrap();
    let section = &html[at..html.find("<h2>Summary per configuration</h2>").unwrap()];
    assert!(section.starts_with(&format!("<h2>Placed differently ({})</h2>", diffs.len())));
    assert_eq!(
        section.matches("<tr><td class=\"seed\">").count(),
        diffs.len()
    );
    for d in diffs {
        let shoot = d["shoot"].as_str().unwrap();
        let row_at = section
            .find(&format!("<tr><td class=\"seed\">{shoot}</td>"))
            .unwrap_or_else(|| panic!("{shoot} has a row"));
        let row = &section[row_at..];
        let row = &row[..row.find("</tr>").unwrap()];
        if let Some(new) = d["new"]["seed"].as_str() {
            assert!(row.contains(&format!("<b>{new}</b>")), "{row}");
            assert!(
                row.contains(
                    "<details><summary>explanation: every seed under the new configuration"
                ),
                "{row}"
            );
        }
        match d["old"]["seed"].as_str() {
            Some(old) => assert!(
                row.contains(&format!("{old} <span class=\"arrow\">")),
                "{row}"
            ),
            None => assert!(row.contains("unschedulable"), "{row}"),
        }
    }
    for side in ["old", "new"] {
        let s = &v[side];
        assert!(
            html.contains(&format!("{} / {}", s["placed"], s["decided"])),
            "{side} summary: {s}"
        );
    }
    assert!(html.contains("<h3>Shoots per region</h3>"));
}

/// `--replay -o html`: the replayed landscape, every replayed shoot's placement.
#[test]
fn replay_html_shows_the_landscape_after_replay() {
    let args = ["-f", "example/landscape", "--config", DEFAULT, "--replay"];
    let v = json(&[&args[..], &["-o", "json"]].concat());
    let (code, html, err) = simulate(&[&args[..], &["-o", "html"]].concat());
    assert_eq!(code, 0, "{err}");
    assert!(html.contains("<h1>Landscape after replay</h1>"), "{html}");
    // "before" is the landscape as bound, not the emptied one the replay decides on
    let bound_before: usize = html
        .split("<td class=\"num\">")
        .skip(1)
        .filter_map(|cell| cell.split_once(" → <b>"))
        .filter_map(|(before, _)| before.parse::<usize>().ok())
        .sum();
    assert!(bound_before > 0, "{html}");
    let decisions = v["decisions"].as_array().unwrap();
    assert!(html.contains(&format!(
        "<div class=\"n\">{}</div><div class=\"l\">shoots replayed</div>",
        decisions.len()
    )));
    for d in decisions.iter().filter(|d| d["seed"].is_string()) {
        assert!(
            html.contains(&format!(
                "<tr><td class=\"seed\">{}</td><td class=\"seed\">{}</td>",
                d["shoot"].as_str().unwrap(),
                d["seed"].as_str().unwrap()
            )),
            "{d}"
        );
    }
}

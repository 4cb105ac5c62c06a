//! `plan outage`: a seed outage rehearsed on the example landscape, with the spans of the
//! configuration's `evacuation.after` and `failback.after`.

#[path = "support/cli.rs"]
mod cli_support;
use cli_support::{bin, run, tmp};

use serde_json::Value;

const DURING: &str = "2026-12-01T00:00:00Z..2026-12-02T00:00:00Z";

fn outage(config: Option<&std::path::Path>, during: &str, output: &str) -> (i32, String, String) {
    let mut c = bin();
    c.args([
        "plan",
        "outage",
        "aws-eu1",
        "--during",
        during,
        "-f",
        "example/landscape/",
        "-o",
        output,
    ]);
    if let Some(config) = config {
        c.arg("--config").arg(config);
    }
    run(&mut c)
}

fn moves(plan: &Value) -> Vec<(String, String, String)> {
    plan["moves"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            let s = |k: &str| m[k].as_str().unwrap().to_string();
            (s("shoot"), s("from"), s("to"))
        })
        .collect()
}

#[test]
fn the_shoots_that_leave_during_an_outage_are_planned_back_after_it() {
    let (code, out, err) = outage(None, DURING, "json");
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    // the defaults: judged unhealthy after 10 minutes, healthy an hour after the end
    assert_eq!(v["judgedUnhealthyAt"], "2026-12-01T00:10:00Z");
    assert_eq!(v["judgedHealthyAt"], "2026-12-02T01:00:00Z");
    assert_eq!(v["evacuation"]["now"], "2026-12-01T00:10:00Z");
    assert_eq!(v["failback"]["goal"]["kind"], "failback");
    let away = moves(&v["evacuation"]);
    assert!(!away.is_empty());
    assert!(
        away.iter().all(|(_, from, _)| from == "aws-eu1"),
        "{away:?}"
    );
    let back = moves(&v["failback"]);
    let mut want: Vec<(String, String, String)> = away
        .iter()
        .map(|(shoot, from, to)| (shoot.clone(), to.clone(), from.clone()))
        .collect();
    let mut got = back.clone();
    want.sort();
    got.sort();
    assert_eq!(
        got, want,
        "every shoot that left goes back where it came from"
    );
    let moved: Vec<&str> = v["movedDuringOutage"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_str().unwrap())
        .collect();
    assert_eq!(moved.len(), away.len());
}

#[test]
fn moves_that_would_start_after_the_seed_recovered_are_not_planned_back() {
    // the windows of the example shoots open at 21:00 UTC at the earliest: a seed down from
    // midnight to noon is judged unhealthy, but no shoot has left by the time it is well again
    let (code, out, err) = outage(None, "2026-12-01T00:00:00Z..2026-12-01T12:00:00Z", "json");
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(!moves(&v["evacuation"]).is_empty());
    assert_eq!(v["movedDuringOutage"], serde_json::json!([]));
    assert!(moves(&v["failback"]).is_empty());
}

#[test]
fn an_outage_shorter_than_evacuation_after_publishes_nothing() {
    let config = tmp(
        "outage-config.yaml",
        "apiVersion: scheduler.config.gardener.cloud/v1alpha1\nkind: SchedulerConfiguration\nschedulers:\n  shoot:\n    evacuation: {after: 2h}\n",
    );
    let (code, _, err) = outage(
        Some(&config),
        "2026-12-01T00:00:00Z..2026-12-01T01:00:00Z",
        "table",
    );
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("an outage of 1h0m0s is shorter than evacuation.after (2h0m0s)"),
        "{err}"
    );
}

#[test]
fn the_table_says_when_the_seed_is_judged_and_shows_both_plans() {
    let (code, out, err) = outage(None, DURING, "table");
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Seed aws-eu1 fails from 2026-12-01T00:00:00Z to 2026-12-02T00:00:00Z: judged unhealthy at 2026-12-01T00:10:00Z"), "{out}");
    assert!(
        out.contains("Drain plan for aws-eu1") && out.contains("Fail-back plan for aws-eu1"),
        "{out}"
    );
}

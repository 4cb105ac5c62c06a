//! `plan outage`: a seed outage rehearsed on the example landscape, with the spans of the
//! configuration's `evacuation.after` and `failback.after`.

#[path = "support/cli.rs"]
mod cli_support;
use cli_support::{assert_has, bin, elements, run, string, tmp};

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
    elements(plan, "moves")
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
    let moved: Vec<&str> = elements(&v, "movedDuringOutage")
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
    assert_has(
        &err,
        &["an outage of 1h0m0s is shorter than evacuation.after (2h0m0s)"],
    );
}

#[test]
fn the_table_says_when_the_seed_is_judged_and_shows_both_plans() {
    let (code, out, err) = outage(None, DURING, "table");
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("Seed aws-eu1 fails from 2026-12-01T00:00:00Z to 2026-12-02T00:00:00Z: judged unhealthy at 2026-12-01T00:10:00Z"), "{out}");
    assert_has(
        &out,
        &["Drain plan for aws-eu1", "Fail-back plan for aws-eu1"],
    );
}

/// `simulate --timeline RANGE --outage aws-eu1@DURING`, as JSON.
fn timeline(range: &str, during: &str) -> (i32, Value, String) {
    let (code, out, err) = run(bin().args([
        "simulate",
        "--timeline",
        range,
        "--outage",
        &format!("aws-eu1@{during}"),
        "-f",
        "example/landscape/",
        "-o",
        "json",
    ]));
    (code, serde_json::from_str(&out).unwrap_or(Value::Null), err)
}

#[test]
fn the_timeline_shows_the_rehearsal_of_plan_outage_move_by_move_in_time_order() {
    let (code, v, err) = timeline("2026-11-30T00:00:00Z..2026-12-03T00:00:00Z", DURING);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = outage(None, DURING, "json");
    assert_eq!(code, 0, "{err}");
    let plan: Value = serde_json::from_str(&out).unwrap();
    let events = v["outage"]["events"].as_array().unwrap();
    let at = |e: &Value| string(e, "at");
    let times: Vec<String> = events.iter().map(at).collect();
    let mut sorted = times.clone();
    sorted.sort();
    assert_eq!(times, sorted, "in time order");
    let kinds = |k: &str| -> Vec<(String, String, String)> {
        let mut got: Vec<_> = events
            .iter()
            .filter(|e| e["event"] == k)
            .map(|e| {
                let s = |f: &str| e[f].as_str().unwrap().to_string();
                (s("shoot"), s("from"), s("to"))
            })
            .collect();
        got.sort();
        got
    };
    let mut away = moves(&plan["evacuation"]);
    let mut back = moves(&plan["failback"]);
    away.sort();
    back.sort();
    // every move starts before the seed is well again in this outage
    assert_eq!(kinds("evacuate"), away);
    assert_eq!(kinds("failBack"), back);
    let judged = |k: &str| events.iter().find(|e| e["event"] == k).map(at);
    assert_eq!(
        judged("evacuationPublished"),
        plan["judgedUnhealthyAt"].as_str().map(String::from)
    );
    assert_eq!(
        judged("failbackPublished"),
        plan["judgedHealthyAt"].as_str().map(String::from)
    );
    let recovered = events.iter().find(|e| e["event"] == "recovered").unwrap();
    assert_eq!(
        recovered["moved"],
        plan["movedDuringOutage"].as_array().unwrap().len()
    );
    assert_eq!(v["outage"]["eventsOutsideRange"], 0);
    // the destinations carry the shoots that left, within their capacity
    let dest = v["outage"]["destinations"].as_array().unwrap();
    let gained: u64 = dest
        .iter()
        .map(|d| {
            d["atRecovery"]
                .as_u64()
                .unwrap()
                .saturating_sub(d["before"].as_u64().unwrap())
        })
        .sum();
    assert_eq!(gained as usize, away.len());
    assert!(
        dest.iter()
            .all(|d| d["capacity"].is_null() || d["atRecovery"].as_u64() <= d["capacity"].as_u64())
    );
}

#[test]
fn an_outage_ending_before_the_windows_open_moves_nothing_and_a_short_range_says_what_it_left_out()
{
    // the seed is well again at noon, before any maintenance window opens
    let (code, v, err) = timeline(
        "2026-12-01T00:00:00Z..2026-12-01T12:00:00Z",
        "2026-12-01T00:00:00Z..2026-12-01T12:00:00Z",
    );
    assert_eq!(code, 0, "{err}");
    let events = v["outage"]["events"].as_array().unwrap();
    assert!(
        events.iter().all(|e| e["event"] != "evacuate"),
        "{events:?}"
    );
    let recovered = events.iter().find(|e| e["event"] == "recovered").unwrap();
    assert_eq!(recovered["moved"], 0);
    assert!(recovered["notStarted"].as_u64().unwrap() > 0);
    // judged healthy an hour after noon: outside the range, and counted
    assert!(v["outage"]["eventsOutsideRange"].as_u64().unwrap() >= 1);
    let (code, out, err) = run(bin().args([
        "simulate",
        "--timeline",
        "2026-12-01T00:00:00Z..2026-12-01T12:00:00Z",
        "--outage",
        "aws-eu1@2026-12-01T00:00:00Z..2026-12-01T12:00:00Z",
        "-f",
        "example/landscape/",
    ]));
    assert_eq!(code, 0, "{err}");
    assert_has(&out, &["fall outside the range; widen --timeline"]);
    assert_has(
        &out,
        &["2026-12-01T00:10:00Z  seed aws-eu1 judged unhealthy"],
    );
}

#[test]
fn a_bad_outage_is_refused_naming_the_flag() {
    for (args, says) in [
        (
            vec![
                "--outage",
                "aws-eu1@2026-12-01T00:00:00Z..2026-12-02T00:00:00Z",
            ],
            "--timeline",
        ),
        (
            vec!["--timeline", DURING, "--outage", "aws-eu1"],
            "expected SEED@FROM..TO",
        ),
        (
            vec![
                "--timeline",
                DURING,
                "--outage",
                "@2026-12-01T00:00:00Z..2026-12-02T00:00:00Z",
            ],
            "the seed's name is missing",
        ),
        (
            vec![
                "--timeline",
                DURING,
                "--outage",
                "nope@2026-12-01T00:00:00Z..2026-12-02T00:00:00Z",
            ],
            "nope",
        ),
    ] {
        let (code, _, err) = run(bin()
            .arg("simulate")
            .args(&args)
            .args(["-f", "example/landscape/"]));
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

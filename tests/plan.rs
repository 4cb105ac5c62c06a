//! `plan drain` and `plan rebalance`: on the example landscape and on small synthetic ones.

use std::path::Path;

use chrono::{DateTime, Utc};
use gardener_scheduler::plan::{self, Objective, Timing, windows::Settings};
use gardener_scheduler::profile::Profile;
use gardener_scheduler::regions::Regions;
use gardener_scheduler::simulate::Landscape;

#[path = "support/cli.rs"]
mod cli_support;
use cli_support::{
    AWS_CLOUD_PROFILE as CLOUD_PROFILE, assert_has, bin, elements, run, string, tmp,
};

const NOW: &str = "2026-12-01T12:00:00Z";

/// A ready seed in eu-west-1; `backup` adds spec.backup (and the condition it requires).
fn seed(name: &str, capacity: u32, backup: bool) -> String {
    seed_in(name, "eu-west-1", capacity, backup)
}

fn seed_in(name: &str, region: &str, capacity: u32, backup: bool) -> String {
    let backup_spec = if backup {
        format!("\n  backup: {{provider: aws, region: {region}}}")
    } else {
        String::new()
    };
    let backup_cond = if backup {
        ", {type: BackupBucketsReady, status: \"True\"}"
    } else {
        ""
    };
    format!(
        r#"
apiVersion: core.gardener.cloud/v1beta1
kind: Seed
metadata: {{name: {name}}}
spec:
  provider: {{type: aws, region: {region}, zones: [a, b, c]}}{backup_spec}
status:
  lastOperation: {{type: Reconcile, state: Succeeded}}
  conditions: [{{type: GardenletReady, status: "True"}}{backup_cond}]
  allocatable: {{shoots: "{capacity}"}}
---"#
    )
}

/// A shoot on `on` with maintenance window `window` (`begin-end`, e.g. `220000+0000-230000+0000`).
fn shoot(name: &str, on: &str, window: Option<(&str, &str)>) -> String {
    shoot_in(name, "eu-west-1", on, window)
}

fn shoot_in(name: &str, region: &str, on: &str, window: Option<(&str, &str)>) -> String {
    let maintenance = window
        .map(|(b, e)| format!("\n  maintenance: {{timeWindow: {{begin: \"{b}\", end: \"{e}\"}}}}"))
        .unwrap_or_default();
    format!(
        r#"
apiVersion: core.gardener.cloud/v1beta1
kind: Shoot
metadata: {{name: {name}, namespace: garden-dev, creationTimestamp: "2026-11-01T00:00:00Z"}}
spec:
  seedName: {on}
  cloudProfile: {{name: aws}}
  region: {region}
  provider: {{type: aws, workers: [{{name: w}}]}}
  kubernetes: {{version: "1.33.0"}}{maintenance}
---"#
    )
}

fn landscape(text: &str) -> Landscape {
    let mut l = Landscape::load_with_documents(&[]).unwrap();
    l.add_text(Path::new("test.yaml"), text).unwrap();
    l
}

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(NOW).unwrap().to_utc()
}

fn settings(max_concurrent: usize, horizon_h: i64) -> Settings {
    Settings {
        horizon_seconds: horizon_h * 3600,
        max_concurrent,
        move_duration_seconds: 1800,
    }
}

fn with_cx<T>(l: &Landscape, f: impl FnOnce(&plan::Context) -> T) -> T {
    let profile = Profile::upstream_default();
    let names = vec!["default-scheduler".to_string()];
    let regions = Regions::builtin();
    let cx = plan::Context {
        landscape: l,
        profile: &profile,
        scheduler_names: &names,
        regions: &regions,
        now: now(),
        explain: None,
        live_migration: false,
        prefer_live: false,
        seed_index: plan::SeedIndex::default(),
    };
    f(&cx)
}

const W: Option<(&str, &str)> = Some(("220000+0000", "230000+0000"));

#[test]
fn drain_counts_each_move_before_the_next_and_respects_capacity() {
    // Four shoots leave `a`; `b` has room for one more (1 of 2 used), `c` for two.
    let mut text = CLOUD_PROFILE.to_string() + "---";
    text += &seed("a", 10, true);
    text += &seed("b", 2, true);
    text += &seed("c", 2, true);
    text += &shoot("on-b", "b", W);
    for n in 0..4 {
        text += &shoot(&format!("s{n}"), "a", W);
    }
    let l = landscape(&text);
    let p = with_cx(&l, |cx| plan::drain(cx, &["a".into()], settings(10, 48))).unwrap();
    let to_b = p.moves.iter().filter(|m| m.to == "b").count();
    let to_c = p.moves.iter().filter(|m| m.to == "c").count();
    assert_eq!((to_b, to_c), (1, 2), "{:#?}", p.moves);
    assert!(p.moves.iter().all(|m| m.from == "a" && m.to != "a"));
    assert_eq!(p.blocked.len(), 1, "{:#?}", p.blocked);
    assert!(p.blocked[0].reason.contains("capacity"), "{:#?}", p.blocked);
    let load = |n: &str| p.seeds.iter().find(|s| s.name == n).unwrap().clone();
    assert_eq!((load("a").before, load("a").after), (4, 1));
    assert_eq!((load("b").after, load("c").after), (2, 2));
}

#[test]
fn drain_respects_migration_preconditions_of_source_and_destination() {
    let mut text = CLOUD_PROFILE.to_string() + "---";
    text += &seed("a", 10, true);
    text += &seed("nobackup", 10, false);
    text += &seed("dest", 10, true);
    text += &seed("nobackup-dest", 10, false);
    text += &shoot("movable", "a", W);
    text += &shoot("stuck", "nobackup", W);
    let l = landscape(&text);
    let p = with_cx(&l, |cx| {
        plan::drain(cx, &["a".into(), "nobackup".into()], settings(10, 48))
    })
    .unwrap();
    assert_eq!(p.moves.len(), 1, "{:#?}", p.moves);
    // `nobackup-dest` is feasible for the scheduler but cannot receive a migration.
    assert_eq!(p.moves[0].to, "dest");
    assert_eq!(p.blocked.len(), 1);
    assert_eq!(p.blocked[0].shoot, "garden-dev/stuck");
    assert!(
        p.blocked[0].reason.contains("spec.backup"),
        "{:?}",
        p.blocked
    );
}

#[test]
fn moves_start_inside_their_window_with_bounded_concurrency() {
    // Three shoots with the same one-hour window, 30-minute moves, one at a time per seed.
    let mut text = CLOUD_PROFILE.to_string() + "---";
    text += &seed("a", 10, true);
    text += &seed("b", 10, true);
    for n in 0..3 {
        text += &shoot(&format!("s{n}"), "a", W);
    }
    let l = landscape(&text);
    let p = with_cx(&l, |cx| plan::drain(cx, &["a".into()], settings(1, 12))).unwrap();
    let mut starts: Vec<DateTime<Utc>> = p
        .moves
        .iter()
        .filter_map(|m| match &m.timing {
            Timing::At { start, .. } => Some(*start),
            _ => None,
        })
        .collect();
    starts.sort();
    let at = |s: &str| DateTime::parse_from_rfc3339(s).unwrap().to_utc();
    assert_eq!(
        starts,
        vec![at("2026-12-01T22:00:00Z"), at("2026-12-01T22:30:00Z")],
        "{:#?}",
        p.moves
    );
    assert_eq!(
        p.deferred(),
        1,
        "the third does not fit before the 12h horizon"
    );
    // With a horizon of two days, the third runs in the next night's window.
    let p = with_cx(&l, |cx| plan::drain(cx, &["a".into()], settings(1, 48))).unwrap();
    assert_eq!(p.deferred(), 0);
    assert!(p.moves.iter().any(|m| matches!(&m.timing,
        Timing::At { start, .. } if *start == at("2026-12-02T22:00:00Z"))));
    // Two at a time: two start with the window, the third when one of them ends.
    let p = with_cx(&l, |cx| plan::drain(cx, &["a".into()], settings(2, 12))).unwrap();
    assert_eq!(p.deferred(), 0);
    let mut starts: Vec<String> = p
        .moves
        .iter()
        .filter_map(|m| match &m.timing {
            Timing::At { start, .. } => Some(start.format("%H:%M").to_string()),
            _ => None,
        })
        .collect();
    starts.sort();
    assert_eq!(starts, ["22:00", "22:00", "22:30"]);
}

#[test]
fn rebalance_greedy_against_the_exhaustive_optimum_on_small_landscapes() {
    // (capacities, shoots per seed, max moves)
    let cases: &[(&[u32], &[usize], usize)] = &[
        (&[4, 4, 4], &[4, 0, 0], 2),
        (&[4, 4, 4], &[4, 0, 0], 3),
        (&[2, 6, 10], &[2, 4, 0], 3),
        (&[3, 5, 8, 8], &[3, 3, 2, 0], 3),
        (&[10, 2, 4], &[1, 2, 3], 2),
    ];
    let mut worst: f64 = 1.0;
    for (caps, counts, n) in cases {
        let mut text = CLOUD_PROFILE.to_string() + "---";
        for (i, (cap, count)) in caps.iter().zip(counts.iter()).enumerate() {
            text += &seed(&format!("s{i}"), *cap, true);
            for k in 0..*count {
                text += &shoot(&format!("x{i}-{k}"), &format!("s{i}"), W);
            }
        }
        let l = landscape(&text);
        let (p, best) = with_cx(&l, |cx| {
            (
                plan::rebalance(cx, Objective::Spread, *n, settings(10, 48)).unwrap(),
                plan::rebalance::optimum(cx, Objective::Spread, *n),
            )
        });
        assert!(p.moves.len() <= *n);
        let before = p.figures[0].before;
        let after = p.figures[0].after;
        assert!(
            best <= after + 1e-9,
            "optimum {best} worse than greedy {after}"
        );
        let ratio = if before - best > 1e-9 {
            (before - after) / (before - best)
        } else {
            1.0
        };
        eprintln!(
            "caps {caps:?} counts {counts:?} N={n}: spread {before:.3} -> greedy {after:.3}, \
             optimum {best:.3}: {:.1}% of the best improvement",
            100.0 * ratio
        );
        // Seeds after the plan never exceed their capacity.
        for s in &p.seeds {
            assert!(s.after <= s.capacity.unwrap(), "{s:?}");
        }
        worst = worst.min(ratio);
    }
    eprintln!("worst greedy/optimum improvement ratio: {:.3}", worst);
    assert!(
        worst >= 0.9,
        "greedy reached only {worst:.3} of the optimum"
    );
}

#[test]
fn rebalance_stops_when_no_move_improves() {
    let mut text = CLOUD_PROFILE.to_string() + "---";
    text += &seed("a", 4, true);
    text += &seed("b", 4, true);
    text += &shoot("x", "a", W);
    text += &shoot("y", "b", W);
    let l = landscape(&text);
    let p = with_cx(&l, |cx| {
        plan::rebalance(cx, Objective::Spread, 5, settings(2, 48))
    })
    .unwrap();
    assert!(p.moves.is_empty(), "{:#?}", p.moves);
}

// ---- the command

#[test]
fn drain_on_the_example_landscape_lists_moves_and_figures() {
    let (code, out, err) = run(bin().args([
        "plan",
        "drain",
        "aws-eu1",
        "az-weu1",
        "-f",
        "example/landscape/",
        "--now",
        NOW,
        "-o",
        "json",
    ]));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect(&out);
    let moves = v["moves"].as_array().unwrap();
    assert!(!moves.is_empty(), "{out}");
    for m in moves {
        assert!(m["to"] != "aws-eu1" && m["to"] != "az-weu1", "{m}");
        assert_eq!(m["timing"]["state"], "at", "{m}");
    }
    let blocked = v["blocked"].as_array().unwrap();
    assert_eq!(
        moves.len() + blocked.len(),
        v["figures"][0]["before"].as_f64().unwrap() as usize,
        "every shoot on the drained seeds is either moved or listed: {out}"
    );
}

/// The landscape source: files or a cluster, one of them required; a kubeconfig that cannot be
/// read and a bad page size are usage errors naming them, before anything is read.
#[test]
fn landscape_source_usage_errors_exit_2() {
    let (code, out, err) = run(bin().args(["plan", "drain", "a"]));
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty());
    assert!(err.contains("--filename"), "{err}");

    let missing = tmp("no-kubeconfig-here", "");
    std::fs::remove_file(&missing).unwrap();
    let (code, out, err) = run(bin()
        .args(["plan", "rebalance", "--max-moves", "1", "--kubeconfig"])
        .arg(&missing));
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "no plan: {out}");
    assert!(err.contains("no-kubeconfig-here"), "{err}");

    let (code, _, err) = run(bin().args(["plan", "drain", "a", "--live", "--chunk-size", "0"]));
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--chunk-size"), "{err}");
}

#[test]
fn unknown_seed_is_a_usage_error_naming_it() {
    let (code, out, err) =
        run(bin().args(["plan", "drain", "no-such-seed", "-f", "example/landscape/"]));
    assert_eq!(code, 2);
    assert!(out.is_empty(), "no partial plan: {out}");
    assert!(err.contains("\"no-such-seed\""), "{err}");
}

#[test]
fn malformed_window_is_an_error_naming_shoot_and_field() {
    let text = CLOUD_PROFILE.to_string()
        + "---"
        + &seed("a", 10, true)
        + &seed("b", 10, true)
        + &shoot("bad", "a", Some(("22:00", "230000+0000")));
    let f = tmp("bad-window.yaml", &text);
    let (code, out, err) = run(bin().args(["plan", "drain", "a", "-f"]).arg(&f));
    assert_eq!(code, 2, "{out}");
    assert!(out.is_empty(), "no partial plan: {out}");
    assert_has(
        &err,
        &["garden-dev/bad", "spec.maintenance.timeWindow.begin"],
    );
}

#[test]
fn malformed_manifest_is_an_error_naming_the_document() {
    let f = tmp(
        "broken.yaml",
        "apiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nspec: [\n",
    );
    let (code, out, err) = run(bin()
        .args(["plan", "rebalance", "--max-moves", "1", "-f"])
        .arg(&f));
    assert_eq!(code, 2, "{out}");
    assert!(err.contains("broken.yaml"), "{err}");
}

#[test]
fn yaml_output_is_one_binding_document_per_scheduled_move() {
    let (code, out, err) = run(bin().args([
        "plan",
        "drain",
        "aws-eu1",
        "-f",
        "example/landscape/",
        "--now",
        NOW,
        "-o",
        "yaml",
    ]));
    assert_eq!(code, 0, "{err}");
    let docs: Vec<serde_yaml_ng::Value> = serde_yaml_ng::Deserializer::from_str(&out)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .collect();
    assert!(!docs.is_empty(), "{out}");
    for d in &docs {
        assert_eq!(d["kind"].as_str(), Some("Shoot"));
        let to = d["spec"]["seedName"].as_str().unwrap();
        assert_ne!(to, "aws-eu1", "{out}");
        assert!(
            d.get("status").is_none(),
            "binding documents carry no status"
        );
    }
}

#[test]
fn html_report_is_self_contained() {
    let (code, out, err) = run(bin().args([
        "plan",
        "drain",
        "aws-eu1",
        "aws-jp1",
        "-f",
        "example/landscape/",
        "--now",
        NOW,
        "-o",
        "html",
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("<!DOCTYPE html>"));
    for external in ["<link", " src=", "http://", "https://", "@import", "url("] {
        assert!(!out.contains(external), "external reference {external:?}");
    }
    assert!(out.contains("<details>") && out.contains("<svg"), "{out}");
    assert!(out.contains("<h3>aws</h3>"), "seeds grouped by provider");
    assert!(out.contains("Cannot move"), "{out}");
}

#[test]
fn rebalance_latency_moves_far_shoots_home_within_capacity() {
    // Three eu-west-1 shoots run in us-east-1; the eu-west-1 seed has room for two.
    let mut text = CLOUD_PROFILE.to_string() + "---";
    text += &seed_in("us", "us-east-1", 10, true);
    text += &seed_in("eu", "eu-west-1", 2, true);
    for n in 0..3 {
        text += &shoot(&format!("far{n}"), "us", W);
    }
    let l = landscape(&text);
    let (p, best) = with_cx(&l, |cx| {
        (
            plan::rebalance(cx, Objective::Latency, 3, settings(10, 48)).unwrap(),
            plan::rebalance::optimum(cx, Objective::Latency, 3),
        )
    });
    assert_eq!(p.moves.len(), 2, "{:#?}", p.moves);
    assert!(p.moves.iter().all(|m| m.from == "us" && m.to == "eu"));
    let f = &p.figures[0];
    assert!(f.before > 50.0, "eu-west-1 to us-east-1 is far: {f:?}");
    assert!((f.after - f.before / 3.0).abs() < 1e-6, "{f:?}");
    assert!(
        (f.after - best).abs() < 1e-9,
        "greedy {} optimum {best}",
        f.after
    );
    assert!(p.moves.iter().all(|m| m.gain.unwrap() > 0.0));
}

#[test]
fn planning_doc_shows_the_output_of_its_example() {
    let (code, out, err) = run(bin().args([
        "plan",
        "drain",
        "aws-eu1",
        "az-weu1",
        "-f",
        "example/landscape/",
        "--now",
        NOW,
        "--max-concurrent",
        "1",
        "--horizon",
        "24h",
    ]));
    assert_eq!(code, 0, "{err}");
    let doc = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/operations/planning.md"),
    )
    .unwrap();
    assert!(
        doc.contains(&format!("```text\n{out}```")),
        "docs/operations/planning.md shows other output than:\n{out}"
    );
}

#[test]
fn simulate_html_report_is_self_contained() {
    let (code, out, err) = run(bin().args([
        "simulate",
        "-f",
        "example/landscape/",
        "--now",
        NOW,
        "-o",
        "html",
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("<!DOCTYPE html>"));
    for external in ["<link", " src=", "http://", "https://", "@import", "url("] {
        assert!(!out.contains(external), "external reference {external:?}");
    }
    assert!(out.contains("<h2>Placements (") && out.contains("<h2>Unschedulable ("));
    // Every pending shoot appears once, placed or not.
    let (_, table, _) = run(bin().args(["simulate", "-f", "example/landscape/", "--now", NOW]));
    let shoots = table.lines().filter(|l| l.starts_with("garden-")).count();
    let rows = out.matches("<tr><td class=\"seed\">garden-").count();
    assert_eq!(rows, shoots, "{out}");
}

/// A cycle of moves: eu is full; a and c leave it (late windows), b and d come home to it
/// (early windows). Each arrival needs a slot a departure frees, so it must start after one.
fn full_seed_cycle() -> String {
    let mut text = CLOUD_PROFILE.to_string() + "---";
    text += &seed_in("eu", "eu-west-1", 2, true);
    text += &seed_in("ap", "ap-southeast-1", 2, true);
    text += &seed_in("us", "us-east-1", 2, true);
    let late = Some(("230000+0000", "235900+0000"));
    let early = Some(("200000+0000", "210000+0000"));
    text += &shoot_in("a", "ap-southeast-1", "eu", late);
    text += &shoot_in("c", "us-east-1", "eu", late);
    text += &shoot_in("b", "eu-west-1", "ap", early);
    text += &shoot_in("d", "eu-west-1", "us", early);
    text
}

/// Replays the scheduled moves in start-time order (ends before starts at the same instant)
/// and returns the highest number of control planes `seed` hosts at any instant.
fn peak_load(
    moves: &[(String, String, DateTime<Utc>, DateTime<Utc>)],
    seed: &str,
    load: i64,
) -> i64 {
    let mut events: Vec<(DateTime<Utc>, i64)> = Vec::new();
    for (from, to, start, end) in moves {
        if to == seed {
            events.push((*start, 1));
        }
        if from == seed {
            events.push((*end, -1));
        }
    }
    events.sort();
    let (mut now, mut peak) = (load, load);
    for (_, d) in events {
        now += d;
        peak = peak.max(now);
    }
    peak
}

#[test]
fn a_move_onto_a_full_seed_starts_after_the_move_that_frees_its_slot() {
    let l = landscape(&full_seed_cycle());
    let p = with_cx(&l, |cx| {
        plan::rebalance(cx, Objective::Latency, 4, settings(10, 48)).unwrap()
    });
    assert_eq!(p.moves.len(), 4, "{:#?}", p.moves);
    let timed: Vec<_> = p
        .moves
        .iter()
        .map(|m| match &m.timing {
            Timing::At { start, end, .. } => (m.from.clone(), m.to.clone(), *start, *end),
            other => panic!("{}: {other:?}", m.shoot),
        })
        .collect();
    for seed in ["eu", "ap", "us"] {
        assert!(
            peak_load(&timed, seed, if seed == "eu" { 2 } else { 1 }) <= 2,
            "{seed} overcommitted: {timed:#?}"
        );
    }
    // The same plan from the binary, in every output format.
    let f = tmp("full-seed-cycle.yaml", &full_seed_cycle());
    let args = |o: &str| {
        let mut c = bin();
        c.args([
            "plan",
            "rebalance",
            "--max-moves",
            "4",
            "--objective",
            "latency",
        ])
        .args([
            "--max-concurrent",
            "10",
            "--horizon",
            "48h",
            "--now",
            NOW,
            "-o",
            o,
            "-f",
        ])
        .arg(&f);
        c
    };
    let (code, out, err) = run(&mut args("json"));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let ts = |m: &serde_json::Value, k: &str| {
        DateTime::parse_from_rfc3339(m["timing"][k].as_str().unwrap())
            .unwrap()
            .to_utc()
    };
    let timed: Vec<_> = elements(&v, "moves")
        .map(|m| {
            (
                string(m, "from"),
                string(m, "to"),
                ts(m, "start"),
                ts(m, "end"),
            )
        })
        .collect();
    assert!(peak_load(&timed, "eu", 2) <= 2, "{timed:#?}");
    let first_arrival = timed
        .iter()
        .filter(|m| m.1 == "eu")
        .map(|m| m.2)
        .min()
        .unwrap();
    let first_departure_end = timed
        .iter()
        .filter(|m| m.0 == "eu")
        .map(|m| m.3)
        .min()
        .unwrap();
    assert!(first_arrival >= first_departure_end, "{timed:#?}");
    for o in ["table", "yaml", "html"] {
        let (code, out, err) = run(&mut args(o));
        assert_eq!(code, 0, "{o}: {err}");
        for (_, _, start, _) in &timed {
            let t = if o == "html" {
                start.format("%Y-%m-%d %H:%M").to_string()
            } else {
                start.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
            };
            assert!(out.contains(&t), "{o} lacks {t}: {out}");
        }
    }
}

#[test]
fn draining_every_seed_says_they_are_being_drained() {
    let mut text = CLOUD_PROFILE.to_string() + "---";
    text += &seed("a", 10, true);
    text += &seed("b", 10, true);
    text += &shoot("x", "a", W);
    text += &shoot("y", "b", W);
    let l = landscape(&text);
    let p = with_cx(&l, |cx| {
        plan::drain(cx, &["a".into(), "b".into()], settings(2, 48)).unwrap()
    });
    assert_eq!(p.blocked.len(), 2, "{:#?}", p.blocked);
    for b in &p.blocked {
        assert!(
            b.reason
                .contains("every seed of the landscape is being drained (a, b)"),
            "{}",
            b.reason
        );
        assert!(
            !b.reason.contains("no seeds are registered"),
            "{}",
            b.reason
        );
    }
}

#[test]
fn a_move_longer_than_its_window_is_deferred_not_started_at_the_window() {
    let mut text = CLOUD_PROFILE.to_string() + "---";
    text += &seed("a", 10, true);
    text += &seed("b", 10, true);
    text += &shoot("x", "a", W);
    let l = landscape(&text);
    let mut long = settings(2, 48);
    long.move_duration_seconds = 2 * 3600;
    let p = with_cx(&l, |cx| plan::drain(cx, &["a".into()], long).unwrap());
    match &p.moves[0].timing {
        Timing::Deferred { reason, .. } => assert!(
            reason.contains("no occurrence of its window leaves 2h for the move"),
            "{reason}"
        ),
        other => panic!("a 2h move in a 1h window: {other:?}"),
    }
}

#[test]
fn flags_and_windows_past_what_start_times_can_hold_are_refused() {
    let mut text = CLOUD_PROFILE.to_string() + "---";
    text += &seed("a", 10, true);
    text += &seed("b", 10, true);
    text += &shoot("x", "a", W);
    let f = tmp("edges.yaml", &text);
    let plan = |args: &[&str]| run(bin().arg("plan").args(args).arg("-f").arg(&f));
    let (code, _, err) = plan(&["rebalance", "--max-moves", "0"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--max-moves"), "{err}");
    let (code, out, err) = plan(&["drain", "a", "--now", "9999-12-31T23:59:59Z"]);
    assert_eq!(code, 2, "{err}");
    assert!(out.is_empty(), "{out}");
    assert!(err.contains("would pass the year 9999"), "{err}");
    let (code, _, err) = plan(&["drain", "a", "--horizon", "1000000h"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--horizon"), "{err}");
    let leap = CLOUD_PROFILE.to_string()
        + "---"
        + &seed("a", 10, true)
        + &seed("b", 10, true)
        + &shoot("x", "a", Some(("225960+0000", "235900+0000")));
    let f = tmp("leap-second.yaml", &leap);
    let (code, out, err) = run(bin().args(["plan", "drain", "a", "-f"]).arg(&f));
    assert_eq!(code, 2, "{err}");
    assert!(!out.contains(":60Z"), "{out}");
    assert_has(
        &err,
        &["spec.maintenance.timeWindow.begin: \"225960+0000\" is not HHMMSS+ZZZZ"],
    );
}

#[test]
fn explanations_list_the_best_seeds_and_count_the_rest_unless_every_seed_is_asked_for() {
    let mut text = CLOUD_PROFILE.to_string() + "---";
    for n in 0..14 {
        text += &seed(&format!("s{n:02}"), 100, true);
    }
    text += &seed_in("far", "us-east-1", 100, true);
    text += &shoot("x", "s00", W);
    let l = landscape(&text);
    let drain = |explain: Option<usize>| {
        let profile = Profile::upstream_default();
        let names = vec!["default-scheduler".to_string()];
        let regions = Regions::builtin();
        let cx = plan::Context {
            landscape: &l,
            profile: &profile,
            scheduler_names: &names,
            regions: &regions,
            now: now(),
            explain,
            live_migration: false,
            prefer_live: false,
            seed_index: plan::SeedIndex::default(),
        };
        plan::drain(&cx, &["s00".into()], settings(2, 48)).unwrap()
    };
    let capped = &drain(Some(plan::EXPLAIN_TOP)).moves[0].explanation;
    assert!(capped.contains("… and 3 more feasible seed(s)"), "{capped}");
    assert!(capped.contains("Rejected seeds: 1"), "{capped}");
    assert!(
        !capped.contains("s13") || !capped.contains("s12"),
        "{capped}"
    );
    let full = &drain(None).moves[0].explanation;
    assert_has(full, &["far", "s13", "s12"]);
}

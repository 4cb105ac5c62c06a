use std::path::Path;

use super::*;
use crate::plan::failback::tests::{now, seed, shoot};
use crate::plan::{self, windows::Settings};
use crate::profile::Profile;
use crate::regions::Regions;
use crate::simulate::Landscape;

/// Drains `sick` of a landscape with `shoots` shoots on it and room for `room` elsewhere.
fn drained(shoots: usize, room: u32) -> Plan {
    let mut text = "apiVersion: core.gardener.cloud/v1beta1\nkind: CloudProfile\nmetadata: {name: aws}\nspec: {type: aws}\n---".to_string();
    text += &seed("sick", 100);
    text += &seed("spare", room);
    for n in 0..shoots {
        text += &shoot(&format!("s{n}"), "sick", "");
    }
    let mut l = Landscape::load_with_documents(&[]).unwrap();
    l.add_text(Path::new("test.yaml"), &text).unwrap();
    let profile = Profile::upstream_default();
    let names = vec!["default-scheduler".to_string()];
    let regions = Regions::builtin();
    let cx = plan::Context {
        landscape: &l,
        profile: &profile,
        scheduler_names: &names,
        regions: &regions,
        now: now(),
        explain: None,
        live_migration: false,
        prefer_live: false,
        seed_index: plan::SeedIndex::default(),
    };
    let settings = Settings {
        horizon_seconds: 48 * 3600,
        max_concurrent: 2,
        move_duration_seconds: 1800,
    };
    plan::drain(&cx, &["sick".into()], settings).unwrap()
}

fn occasion<'a>(reasons: &'a [String]) -> Occasion<'a> {
    Occasion {
        seed: "sick",
        judged_at: now(),
        reasons,
        automatic: None,
    }
}

#[test]
fn the_published_plan_is_the_one_plan_apply_reads() {
    let plan = drained(3, 2);
    let reasons = vec!["GardenletReady is False (GardenletNotReady)".to_string()];
    let cm = config_map("garden", Kind::Evacuation, &occasion(&reasons), &plan);
    assert_eq!(cm["metadata"]["name"], "gardener-scheduler-evacuation-sick");
    assert_eq!(cm["metadata"]["labels"][LABEL_PLAN], "evacuation");
    assert_eq!(cm["metadata"]["annotations"][ANNOTATION_SEED], "sick");
    let saved = crate::apply::parse("cm", cm["data"][PLAN_KEY].as_str().unwrap()).unwrap();
    let moved: Vec<_> = saved
        .moves
        .iter()
        .map(|m| (m.shoot.as_str(), m.to.as_str()))
        .collect();
    assert_eq!(
        moved,
        [("garden-dev/s0", "spare"), ("garden-dev/s1", "spare")]
    );
    let summary = cm["data"][SUMMARY_KEY].as_str().unwrap();
    assert!(summary.starts_with("Seed sick is judged unhealthy since 2026-12-01T12:00:00Z:\n  GardenletReady is False (GardenletNotReady)\n2 move(s) (2 scheduled, 0 deferred), 1 shoot(s) cannot move\n"), "{summary}");
    assert!(
        summary.contains("plan apply --from-configmap garden/gardener-scheduler-evacuation-sick"),
        "{summary}"
    );
}

#[test]
fn a_plan_too_large_for_a_configmap_loses_its_explanations_first() {
    let mut plan = drained(2, 5);
    for m in &mut plan.moves {
        m.explanation = "x".repeat(MAX_DATA_BYTES);
    }
    let cm = config_map("garden", Kind::Evacuation, &occasion(&[]), &plan);
    let json = cm["data"][PLAN_KEY]
        .as_str()
        .expect("the plan is kept without explanations");
    assert!(json.len() < 64 * 1024, "{}", json.len());
    assert_eq!(crate::apply::parse("cm", json).unwrap().moves.len(), 2);
}

#[test]
fn a_plan_too_large_even_without_explanations_is_left_out_with_a_note() {
    let mut plan = drained(2, 5);
    plan.moves[0].reason = "y".repeat(MAX_DATA_BYTES);
    let cm = config_map("garden", Kind::Evacuation, &occasion(&[]), &plan);
    assert!(cm["data"].get(PLAN_KEY).is_none());
    let summary = cm["data"][SUMMARY_KEY].as_str().unwrap();
    assert!(
        summary.contains("plan drain sick --live -o json"),
        "{summary}"
    );
}

#[test]
fn names_fit_the_api_server_and_tell_long_seed_names_apart() {
    assert_eq!(name(Kind::Failback, "s1"), "gardener-scheduler-failback-s1");
    let a = name(Kind::Evacuation, &format!("{}a", "x".repeat(240)));
    let b = name(Kind::Evacuation, &format!("{}b", "x".repeat(240)));
    assert!(a.len() <= 253 && b.len() <= 253);
    assert_ne!(a, b);
    assert!(crate::names::dns1123_subdomain(&a).is_ok(), "{a}");
}

#[test]
fn the_note_names_the_configmap_and_at_most_three_reasons_within_a_kib() {
    let plan = drained(1, 5);
    let reasons: Vec<String> = (0..5)
        .map(|i| format!("Condition{i} is False: {}", "m".repeat(300)))
        .collect();
    let note = note(Kind::Evacuation, "garden", &occasion(&reasons), &plan);
    assert!(note.len() <= MAX_NOTE, "{}", note.len());
    assert!(
        note.starts_with("Seed judged unhealthy (Condition0 is False"),
        "{note}"
    );
    let short = super::note(Kind::Evacuation, "garden", &occasion(&reasons[..1]), &plan);
    assert!(
        short.contains("ConfigMap garden/gardener-scheduler-evacuation-sick: 1 move(s)"),
        "{short}"
    );
}

#[test]
fn an_automatic_plan_says_its_limits_instead_of_asking_for_an_apply() {
    let plan = drained(1, 2);
    let limits = crate::config::Automatic {
        max_moves_in_flight: 1,
        max_moves_per_hour: 2,
        max_share_in_flight: 50,
    };
    let at = Occasion {
        automatic: Some(&limits),
        ..occasion(&[])
    };
    let cm = config_map("garden", Kind::Evacuation, &at, &plan);
    let summary = cm["data"][SUMMARY_KEY].as_str().unwrap();
    let note = note(Kind::Evacuation, "garden", &at, &plan);
    for text in [summary, note.as_str()] {
        assert!(
            text.contains("at most 1 move(s) in flight, 2 per hour, 50% of the scheduled shoots"),
            "{text}"
        );
        assert!(!text.contains("plan apply"), "{text}");
    }
    // a fail-back plan is never carried out by the process
    let back = config_map("garden", Kind::Failback, &at, &plan);
    assert!(
        back["data"][SUMMARY_KEY]
            .as_str()
            .unwrap()
            .contains("plan apply --from-configmap")
    );
}

#[test]
fn the_same_moves_are_the_same_plan_and_other_moves_are_not() {
    let a = drained(2, 5);
    let mut b = drained(2, 5);
    b.now = now() + chrono::Duration::minutes(5);
    assert_eq!(fingerprint(&a), fingerprint(&b));
    let published = crate::plan::output::render_json(&b);
    assert_eq!(fingerprint_json(&published), Some(fingerprint(&a)));
    b.moves.pop();
    assert_ne!(fingerprint(&a), fingerprint(&b));
}

#[test]
fn a_seed_s_plan_keeps_only_the_shoots_leaving_it() {
    let plan = drained(3, 2);
    let own = leaving(plan.clone(), "sick");
    assert_eq!((own.moves.len(), own.blocked.len()), (2, 1));
    assert_eq!((own.figures[0].before, own.figures[0].after), (3.0, 1.0));
    let other = leaving(plan, "spare");
    assert!(other.moves.is_empty() && other.blocked.is_empty());
    assert_eq!(other.figures[0].name, "shoots on spare");
}

#[test]
fn the_shoots_a_published_plan_moves_are_read_back_from_its_json() {
    let plan = drained(3, 2);
    let json = crate::plan::output::render_json(&plan);
    assert_eq!(moved_shoots(&json), ["garden-dev/s0", "garden-dev/s1"]);
    assert!(moved_shoots("not json").is_empty());
}

#[test]
fn the_html_report_is_published_beside_the_plan_when_it_fits_and_named_when_it_does_not() {
    let plan = drained(3, 2);
    let cm = config_map("garden", Kind::Evacuation, &occasion(&[]), &plan);
    let html = cm["data"][HTML_KEY].as_str().expect("the report fits");
    assert!(
        html.starts_with("<!DOCTYPE html>"),
        "{}",
        &html[..40.min(html.len())]
    );
    assert!(html.contains("garden-dev/s0") && html.contains("spare"));
    let summary = cm["data"][SUMMARY_KEY].as_str().unwrap();
    assert!(!summary.contains("HTML report is left out"), "{summary}");
    // explanations too large for the report but not for the lean plan: the plan stays, the
    // report goes, and the summary says how to make it
    let mut big = drained(2, 5);
    for m in &mut big.moves {
        m.explanation = "x".repeat(MAX_DATA_BYTES / 2);
    }
    let cm = config_map("garden", Kind::Evacuation, &occasion(&[]), &big);
    assert!(cm["data"].get(PLAN_KEY).is_some());
    assert!(cm["data"].get(HTML_KEY).is_none());
    let summary = cm["data"][SUMMARY_KEY].as_str().unwrap();
    assert!(
        summary.contains("plan drain sick --live -o html"),
        "{summary}"
    );
    let total: usize = ["plan.json", "summary"]
        .iter()
        .filter_map(|k| cm["data"][k].as_str())
        .map(str::len)
        .sum();
    assert!(total <= MAX_DATA_BYTES);
}

use std::path::Path;

use chrono::{DateTime, Utc};

use super::*;
use crate::plan::{SeedIndex, Timing};
use crate::profile::Profile;
use crate::regions::Regions;
use crate::simulate::Landscape;

/// The instant the tests plan at (2026-12-01T12:00:00Z).
pub(crate) fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-01T12:00:00Z")
        .unwrap()
        .to_utc()
}

/// A ready aws seed in eu-west-1 with a backup and room for `capacity` shoots, as a YAML document.
pub(crate) fn seed(name: &str, capacity: u32) -> String {
    format!(
        r#"
apiVersion: core.gardener.cloud/v1beta1
kind: Seed
metadata: {{name: {name}}}
spec:
  provider: {{type: aws, region: eu-west-1, zones: [a, b, c]}}
  backup: {{provider: aws, region: eu-west-1}}
status:
  lastOperation: {{type: Reconcile, state: Succeeded}}
  conditions: [{{type: GardenletReady, status: "True"}}, {{type: BackupBucketsReady, status: "True"}}]
  allocatable: {{shoots: "{capacity}"}}
---"#
    )
}

pub(crate) fn shoot(name: &str, on: &str, annotations: &str) -> String {
    format!(
        r#"
apiVersion: core.gardener.cloud/v1beta1
kind: Shoot
metadata: {{name: {name}, namespace: garden-dev, creationTimestamp: "2026-11-01T00:00:00Z", annotations: {{{annotations}}}}}
spec:
  seedName: {on}
  cloudProfile: {{name: aws}}
  region: eu-west-1
  provider: {{type: aws, workers: [{{name: w}}]}}
  kubernetes: {{version: "1.33.0"}}
  maintenance: {{timeWindow: {{begin: "220000+0000", end: "230000+0000"}}}}
---"#
    )
}

/// `home` with room for `room` shoots (one of them `stayed`), `away` holding a, b and `gated`.
fn landscape(room: u32) -> Landscape {
    let mut text = "apiVersion: core.gardener.cloud/v1beta1\nkind: CloudProfile\nmetadata: {name: aws}\nspec: {type: aws}\n---".to_string();
    text += &seed("home", room);
    text += &seed("away", 10);
    text += &shoot("stayed", "home", "");
    text += &shoot("a", "away", "");
    text += &shoot("b", "away", "");
    text += &shoot(
        "gated",
        "away",
        "\"scheduling.gardener.cloud/gates\": \"hold\"",
    );
    let mut l = Landscape::load_with_documents(&[]).unwrap();
    l.add_text(Path::new("test.yaml"), &text).unwrap();
    l
}

fn plan_back(l: &Landscape, seed: &str, shoots: &[&str]) -> Result<Plan, PlanError> {
    let profile = Profile::upstream_default();
    let names = vec!["default-scheduler".to_string()];
    let regions = Regions::builtin();
    let cx = Context {
        landscape: l,
        profile: &profile,
        scheduler_names: &names,
        regions: &regions,
        now: now(),
        explain: Some(3),
        live_migration: false,
        prefer_live: false,
        seed_index: SeedIndex::default(),
    };
    let shoots: Vec<String> = shoots.iter().map(|s| format!("garden-dev/{s}")).collect();
    let settings = windows::Settings {
        horizon_seconds: 48 * 3600,
        max_concurrent: 2,
        move_duration_seconds: 1800,
    };
    failback(&cx, seed, &shoots, settings)
}

#[test]
fn the_shoots_that_left_go_back_in_their_windows_and_the_others_are_left_out() {
    let l = landscape(10);
    let p = plan_back(&l, "home", &["a", "b", "stayed", "gone"]).unwrap();
    let moved: Vec<(&str, &str, &str)> = p
        .moves
        .iter()
        .map(|m| (m.shoot.as_str(), m.from.as_str(), m.to.as_str()))
        .collect();
    assert_eq!(
        moved,
        [
            ("garden-dev/a", "away", "home"),
            ("garden-dev/b", "away", "home")
        ]
    );
    assert!(p.blocked.is_empty(), "{:?}", p.blocked);
    for m in &p.moves {
        assert!(m.reason.starts_with("back to home: "), "{}", m.reason);
        let Timing::At { start, .. } = m.timing else {
            panic!("{:?}", m.timing)
        };
        assert_eq!(start.format("%H:%M").to_string(), "22:00");
    }
    assert_eq!((p.figures[0].before, p.figures[0].after), (1.0, 3.0));
    assert_eq!(crate::plan::output::title(&p), "Fail-back plan for home");
    let json = crate::plan::output::render_json(&p);
    assert_eq!(crate::apply::parse("p", &json).unwrap().moves.len(), 2);
}

#[test]
fn a_seed_with_room_for_one_takes_one_back_and_says_why_not_the_other() {
    let l = landscape(2);
    let p = plan_back(&l, "home", &["a", "b"]).unwrap();
    assert_eq!(p.moves.len(), 1);
    assert_eq!(p.moves[0].shoot, "garden-dev/a");
    assert_eq!(p.blocked.len(), 1);
    assert_eq!(p.blocked[0].shoot, "garden-dev/b");
    assert_eq!(p.blocked[0].category, "home does not fit");
    assert!(
        p.blocked[0].reason.starts_with("home does not fit: "),
        "{:?}",
        p.blocked
    );
}

#[test]
fn a_gated_shoot_stays_with_its_reason() {
    let l = landscape(10);
    let p = plan_back(&l, "home", &["gated"]).unwrap();
    assert!(p.moves.is_empty());
    assert_eq!(p.blocked[0].category, "gated");
}

#[test]
fn an_unknown_seed_is_refused_before_planning() {
    let l = landscape(10);
    let e = plan_back(&l, "nowhere", &["a"]).unwrap_err();
    assert!(e.to_string().contains("seed \"nowhere\""), "{e}");
}

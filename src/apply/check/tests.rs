use chrono::{DateTime, Utc};

use super::*;
use crate::api::Gardener;
use crate::apply::saved::Kind;
use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
use crate::profile::Profile;
use crate::regions::Regions;
use crate::simulate::Landscape;

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-01-01T22:00:00Z")
        .unwrap()
        .to_utc()
}

fn seed(name: &str, shoots: &str) -> crate::api::Seed {
    seed_with(SeedBuilder::new(name), shoots)
}

fn seed_with(b: SeedBuilder, shoots: &str) -> crate::api::Seed {
    let mut s = b.backup().allocatable("shoots", shoots).build();
    s.status.gardener = Some(Gardener {
        version: "v1.130.0".into(),
    });
    s
}

fn mv(shoot: &str, to: &str, kind: Kind) -> Planned {
    Planned {
        shoot: format!("garden-dev/{shoot}"),
        namespace: "garden-dev".into(),
        name: shoot.into(),
        from: "a".into(),
        to: to.into(),
        kind,
        start: Ok(now()),
    }
}

/// Checks each (shoot, move) in order on one snapshot of `landscape`, as one start round does.
fn check(
    landscape: &Landscape,
    moves: &[(&Shoot, Planned)],
    live: bool,
) -> Vec<Result<(), String>> {
    let profile = Profile::upstream_default();
    let names = vec!["default-scheduler".to_string()];
    let regions = Regions::builtin();
    let cx = Context {
        landscape,
        profile: &profile,
        scheduler_names: &names,
        regions: &regions,
        now: now(),
        explain: None,
        live_migration: live,
        prefer_live: false,
        seed_index: plan::SeedIndex::default(),
    };
    let mut snap = cx.snapshot();
    moves
        .iter()
        .map(|(shoot, m)| recheck(&cx, shoot, m, &mut snap))
        .collect()
}

fn landscape(seeds: Vec<crate::api::Seed>, shoots: Vec<Shoot>) -> Landscape {
    let mut l = Landscape::default();
    l.seeds = seeds;
    l.shoots = shoots;
    l.cloud_profiles = vec![CloudProfileBuilder::new("aws").build()];
    l
}

fn on_a(name: &str) -> Shoot {
    ShootBuilder::new("garden-dev", name)
        .seed("a")
        .status_seed("a")
        .build()
}

#[test]
fn a_move_that_still_holds_passes_and_counts_on_its_destination_for_the_next() {
    let (x, y) = (on_a("x"), on_a("y"));
    let l = landscape(
        vec![seed("a", "10"), seed("b", "1")],
        vec![x.clone(), y.clone()],
    );
    let got = check(
        &l,
        &[
            (&x, mv("x", "b", Kind::Classic)),
            (&y, mv("y", "b", Kind::Classic)),
        ],
        false,
    );
    assert_eq!(got[0], Ok(()));
    let why = got[1].clone().unwrap_err();
    assert!(
        why.starts_with("destination b no longer fits: 1/1 shoots allocated"),
        "{why}"
    );
}

#[test]
fn a_destination_tainted_since_planning_is_refused_with_the_filters_reason() {
    let x = on_a("x");
    let b = seed_with(
        SeedBuilder::new("b").taint("seed.gardener.cloud/protected", None),
        "10",
    );
    let l = landscape(vec![seed("a", "10"), b], vec![x.clone()]);
    let why = check(&l, &[(&x, mv("x", "b", Kind::Classic))], false)[0]
        .clone()
        .unwrap_err();
    assert!(
        why.contains("destination b no longer fits") && why.contains("taint"),
        "{why}"
    );
}

#[test]
fn a_shoot_gated_since_planning_is_never_moved_and_the_gates_are_named() {
    let mut x = on_a("x");
    x.metadata.annotations = Some(
        [(
            crate::api::ANNOTATION_GATES.to_string(),
            "change-freeze".to_string(),
        )]
        .into(),
    );
    let l = landscape(vec![seed("a", "10"), seed("b", "10")], vec![x.clone()]);
    let why = check(&l, &[(&x, mv("x", "b", Kind::Classic))], false)[0]
        .clone()
        .unwrap_err();
    assert_eq!(
        why,
        "the shoot is waiting for scheduling gate(s) change-freeze"
    );
}

#[test]
fn a_destination_without_backup_any_more_is_refused_as_gardener_apiserver_would() {
    let x = on_a("x");
    let mut b = seed("b", "10");
    b.spec.backup = None;
    let l = landscape(vec![seed("a", "10"), b], vec![x.clone()]);
    let why = check(&l, &[(&x, mv("x", "b", Kind::Classic))], false)[0]
        .clone()
        .unwrap_err();
    assert!(why.contains("no spec.backup"), "{why}");
}

#[test]
fn a_move_planned_live_is_skipped_not_downgraded_when_live_is_no_longer_possible() {
    let ha = ShootBuilder::new("garden-dev", "ha")
        .seed("a")
        .status_seed("a")
        .failure_tolerance("zone")
        .build();
    let plain = on_a("plain");
    let l = landscape(
        vec![seed("a", "10"), seed("b", "10")],
        vec![ha.clone(), plain.clone()],
    );
    // still possible: passes
    assert_eq!(
        check(&l, &[(&ha, mv("ha", "b", Kind::Live))], true)[0],
        Ok(())
    );
    // the shoot is no longer highly available
    let why = check(&l, &[(&plain, mv("plain", "b", Kind::Live))], true)[0]
        .clone()
        .unwrap_err();
    assert!(
        why.starts_with("planned live, but a live migration is no longer possible")
            && why.contains("not highly available"),
        "{why}"
    );
    // a classic move of the same shoot is fine
    assert_eq!(
        check(&l, &[(&plain, mv("plain", "b", Kind::Classic))], true)[0],
        Ok(())
    );
}

use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
use crate::profile::Profile;
use crate::schedule::decide;
use crate::snapshot::Snapshot;

fn now() -> DateTime<Utc> {
    "2026-12-01T00:00:00Z".parse().expect("timestamp")
}

fn seed(k: usize) -> SeedBuilder {
    SeedBuilder::new(&format!("seed-{k:04}"))
        .region(if k.is_multiple_of(2) {
            "eu-west-1"
        } else {
            "eu-central-1"
        })
        .allocatable("shoots", "1000")
}

/// Loading a landscape as a relist delivers it (seeds and shoots interleaved, a decision now
/// and then) builds the columns once per seed that came before a decision, not once per seed:
/// building them per added seed made loading N seeds quadratic.
#[test]
fn loading_seeds_builds_the_columns_once_per_decision_that_follows_a_new_seed() {
    let mut snap = Snapshot::new();
    snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
    let profile = Profile::upstream_default();
    for k in 0..300 {
        snap.upsert_seed(&seed(k).build());
        for j in 0..3 {
            snap.upsert_shoot(
                &ShootBuilder::new("garden-p", &format!("s-{k}-{j}"))
                    .seed(&format!("seed-{k:04}"))
                    .build(),
            );
        }
    }
    assert_eq!(snap.column_builds(), 0, "nothing asked for the columns yet");
    let pending = ShootBuilder::new("garden-p", "pending").build();
    for _ in 0..5 {
        decide(&pending, &snap, &profile, now()).expect("a seed fits");
    }
    assert_eq!(
        snap.column_builds(),
        1,
        "300 seeds loaded, then 5 decisions"
    );

    // Shoots coming and going, and a seed's status changing in place, keep the columns.
    for j in 0..50 {
        snap.upsert_shoot(
            &ShootBuilder::new("garden-p", &format!("more-{j}"))
                .seed("seed-0007")
                .build(),
        );
    }
    snap.remove_shoot("garden-p/s-3-1");
    snap.upsert_seed(&seed(12).taint("example.com/maintenance", None).build());
    decide(&pending, &snap, &profile, now()).expect("a seed fits");
    assert_eq!(snap.column_builds(), 1, "usage and in-place changes");

    // A new seed moves positions: the next decision builds them again, once.
    snap.upsert_seed(&seed(300).build());
    snap.upsert_seed(&seed(301).build());
    decide(&pending, &snap, &profile, now()).expect("a seed fits");
    decide(&pending, &snap, &profile, now()).expect("a seed fits");
    assert_eq!(snap.column_builds(), 2, "two seeds added before a decision");
}

/// A shoot's seed selector is matched against every seed once; the next shoot with the same
/// selector reads the same matches, and a seed whose labels change is matched again.
#[test]
fn shoot_seed_selectors_are_matched_once_per_selector_while_the_labels_stay() {
    let mut snap = Snapshot::new();
    snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
    for k in 0..20 {
        let env = if k < 5 { "canary" } else { "live" };
        snap.upsert_seed(&seed(k).label("environment", env).build());
    }
    let profile = Profile::upstream_default();
    let shoot = |name: &str| {
        ShootBuilder::new("garden-p", name)
            .region("eu-central-1")
            .seed_selector("environment", "canary")
            .build()
    };
    let first = decide(&shoot("a"), &snap, &profile, now()).expect("a canary seed fits");
    assert_eq!(first.seed, "seed-0001", "odd seeds are in eu-central-1");
    let selector = crate::context::ShootContext::new(&shoot("b"), &snap, now())
        .expect("context")
        .shoot_selector
        .expect("a selector");
    assert!(
        snap.columns()
            .shoot_selector_matches(&selector, false)
            .is_none(),
        "SameRegion evaluates a tier only: nothing matched in advance"
    );
    let matches = snap
        .columns()
        .shoot_selector_matches(&selector, true)
        .expect("computed");
    assert_eq!(
        matches.iter().filter(|m| **m).count(),
        5,
        "seeds 0-4 are canaries"
    );
    assert!(
        Arc::ptr_eq(
            &matches,
            &snap
                .columns()
                .shoot_selector_matches(&selector, false)
                .expect("kept")
        ),
        "asked again: the same matches, not matched again"
    );

    // seed-0001 is no canary any more: matched again, and the next decision goes elsewhere.
    snap.upsert_seed(&seed(1).label("environment", "live").build());
    let again = snap
        .columns()
        .shoot_selector_matches(&selector, true)
        .expect("computed");
    assert!(!again[1], "{again:?}");
    let second = decide(&shoot("c"), &snap, &profile, now()).expect("a canary seed fits");
    assert_eq!(second.seed, "seed-0003");
}

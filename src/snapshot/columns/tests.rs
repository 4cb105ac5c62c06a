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

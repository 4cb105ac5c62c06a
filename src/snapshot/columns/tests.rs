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
    let selector = crate::snapshot::compile_selector(
        &shoot("b")
            .spec
            .seed_selector
            .expect("a selector")
            .label_selector,
    )
    .expect("parses");
    assert!(
        snap.columns()
            .label_selector_matches(&selector, false)
            .is_none(),
        "SameRegion evaluates a tier only: nothing matched in advance"
    );
    let matches = snap
        .columns()
        .label_selector_matches(&selector, true)
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
                .label_selector_matches(&selector, false)
                .expect("kept")
        ),
        "asked again: the same matches, not matched again"
    );

    // seed-0001 is no canary any more: matched again, and the next decision goes elsewhere.
    snap.upsert_seed(&seed(1).label("environment", "live").build());
    let again = snap
        .columns()
        .label_selector_matches(&selector, true)
        .expect("computed");
    assert!(!again[1], "{again:?}");
    let second = decide(&shoot("c"), &snap, &profile, now()).expect("a canary seed fits");
    assert_eq!(second.seed, "seed-0003");
}

static TAINTED: crate::snapshot::columns::SeedBit = crate::snapshot::columns::SeedBit {
    name: "tainted",
    of: |seed| !seed.taints.is_empty(),
};

/// A declared bit is computed for every seed when first asked, read back with the same mask,
/// computed again for a seed that changes in place, and kept by a clone of the columns.
#[test]
fn a_declared_bit_follows_its_seeds() {
    let mut snap = Snapshot::new();
    for k in 0..4 {
        let b = seed(k);
        snap.upsert_seed(&if k == 1 { b.taint("t", None) } else { b }.build());
    }
    let cols = snap.columns();
    let mask = cols.bit(&TAINTED).expect("a free slot");
    assert_eq!(
        cols.bit(&TAINTED),
        Some(mask),
        "the same bit when asked again"
    );
    let tainted = |snap: &Snapshot| -> Vec<u32> {
        let cols = snap.columns();
        (0..cols.len() as u32)
            .filter(|&i| cols.flags(i) & mask != 0)
            .collect()
    };
    assert_eq!(tainted(&snap), [1]);
    let clone = snap.clone();
    snap.upsert_seed(&seed(2).taint("t", None).build());
    assert_eq!(snap.column_builds(), 1, "a taint changes the seed in place");
    assert_eq!(tainted(&snap), [1, 2]);
    assert_eq!(tainted(&clone), [1], "the clone keeps its own bits");
}

/// The columns keep as many bits as a word has; one more is answered `None` (its plugin then
/// asks every seed), and the bits already kept stay right.
#[test]
fn bits_beyond_the_word_are_refused_and_the_kept_ones_stay() {
    use crate::snapshot::columns::SeedBit;
    use crate::snapshot::columns::bits::SLOTS;
    static MANY: [SeedBit; SLOTS + 1] = [const {
        SeedBit {
            name: "many",
            of: |seed| seed.taints.is_empty(),
        }
    }; SLOTS + 1];
    let mut snap = Snapshot::new();
    snap.upsert_seed(&seed(0).build());
    snap.upsert_seed(&seed(1).taint("t", None).build());
    let cols = snap.columns();
    let masks: Vec<_> = MANY.iter().map(|b| cols.bit(b)).collect();
    assert!(masks[..SLOTS].iter().all(Option::is_some));
    assert_eq!(masks[SLOTS], None);
    assert_eq!(
        cols.flags(0),
        u32::MAX,
        "seed 0 has no taints: every kept bit set"
    );
    assert_eq!(cols.flags(1), 0);
}

static BY_ZONE: crate::snapshot::columns::SeedIndex = crate::snapshot::columns::SeedIndex {
    name: "zones",
    keys: |seed| seed.zones.clone(),
};

/// A declared index is built when first asked, and a seed whose zones change in place is filed
/// under its new zones only, in position order, without the columns being rebuilt.
#[test]
fn a_declared_index_follows_a_seed_changed_in_place() {
    let mut snap = Snapshot::new();
    for k in 0..3 {
        snap.upsert_seed(&seed(k).zones(&["a", "b"]).build());
    }
    let index = snap.columns().index(&BY_ZONE).expect("a free slot");
    assert_eq!(index.seeds("a"), [0, 1, 2]);
    assert_eq!(index.mark(3, [&"c".to_string()]), [false; 3]);
    snap.upsert_seed(&seed(1).zones(&["b", "c"]).build());
    assert_eq!(snap.column_builds(), 1, "zones change the seed in place");
    let index = snap.columns().index(&BY_ZONE).expect("kept");
    assert_eq!(
        (index.seeds("a"), index.seeds("b"), index.seeds("c")),
        (&[0, 2][..], &[0, 1, 2][..], &[1][..])
    );
    assert_eq!(index.mark(3, [&"c".to_string()]), [false, true, false]);
}

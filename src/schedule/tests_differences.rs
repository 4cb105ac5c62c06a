//! The rows of the "Differences from upstream" table in docs/concepts/scheduler.md that the
//! decision itself answers, each checked in both modes of the pipeline (fast, as the controller
//! decides, and explain, as `simulate` and `plan` do), and the inputs upstream accepts on which
//! an earlier reading of ours differed.

use super::*;
use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};

fn snapshot(seeds: &[SeedBuilder], shoots: &[Shoot]) -> Snapshot {
    let mut snap = Snapshot::new();
    snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
    for s in seeds {
        snap.upsert_seed(&s.clone().build());
    }
    for s in shoots {
        snap.upsert_shoot(s);
    }
    snap
}

/// The decision in both modes, which must agree: the seed, or the failure's one-line message.
fn both(shoot: &Shoot, snap: &Snapshot) -> Result<String, String> {
    let profile = Profile::upstream_default();
    let now = Utc::now();
    let fast = decide(shoot, snap, &profile, now);
    let explained = schedule(shoot, snap, &profile, now);
    let fast = fast.map(|d| d.seed.to_string()).map_err(|e| e.to_string());
    let explained = explained
        .map(|d| d.seed.to_string())
        .map_err(|e| e.counted_only().to_string());
    assert_eq!(fast, explained, "fast and explain mode disagree");
    fast
}

fn bound(name: &str, seed: &str) -> Shoot {
    ShootBuilder::new("garden-x", name).seed(seed).build()
}

/// One shoot is bound to a seed publishing `allocatable.shoots`: upstream places a second there
/// when `Value()` (rounded up) exceeds 1.
#[test]
fn a_fractional_allocatable_shoots_is_rounded_up_as_upstream_and_takes_a_second_shoot() {
    for (q, fits) in [
        ("1500m", true),
        ("1.5", true),
        ("1001m", true),
        ("2", true),
        ("9Ei", true),
        ("1", false),
        ("1000m", false),
        ("0.5", false),
        ("-3", false),
        ("10E", false),
    ] {
        let snap = snapshot(
            &[SeedBuilder::new("only").allocatable("shoots", q)],
            &[bound("first", "only")],
        );
        let got = both(&ShootBuilder::new("garden-p", "second").build(), &snap);
        match got {
            Ok(seed) => assert!(fits, "{q}: placed on {seed}"),
            Err(e) => {
                assert!(!fits, "{q}: {e}");
                assert!(e.contains("have no capacity left"), "{q}: {e}");
            }
        }
    }
}

/// gardener-apiserver asks only a non-empty region: seeds and shoots in a region that is no
/// label value are matched as upstream matches them, by equal strings.
#[test]
fn a_region_that_is_not_a_label_value_is_matched_as_upstream_matches_it() {
    for region in ["eu-wést-1", "eu west 1", "EU_WEST_1.", "eu-west-1\u{202e}"] {
        let snap = snapshot(
            &[
                SeedBuilder::new("odd").region(region),
                SeedBuilder::new("plain").region("eu-west-1"),
            ],
            &[],
        );
        let shoot = ShootBuilder::new("garden-p", "s").region(region).build();
        assert_eq!(both(&shoot, &snap).as_deref(), Ok("odd"), "{region:?}");
    }
}

/// A seed whose `spec.networks.shootDefaults` lists only pods or only services: the missing
/// half is no default, as for a seed without `shootDefaults` (upstream dereferences it and
/// panics, so the shoot is never scheduled while such a seed is a candidate). The half it lists
/// is checked as always.
#[test]
fn a_partial_shoot_defaults_counts_the_half_it_lists_and_the_missing_half_is_no_default() {
    let shoot = |b: ShootBuilder| b.nodes("10.250.0.0/16").build();
    let cases = [
        (
            "pods only, shoot without pods or services",
            SeedBuilder::new("seed").shoot_defaults(Some("100.96.0.0/11"), None),
            shoot(ShootBuilder::new("garden-p", "s")),
            true,
        ),
        (
            "services only, shoot without pods or services",
            SeedBuilder::new("seed").shoot_defaults(None, Some("100.64.0.0/13")),
            shoot(ShootBuilder::new("garden-p", "s")),
            true,
        ),
        (
            "services only, workerless shoot",
            SeedBuilder::new("seed").shoot_defaults(None, Some("100.64.0.0/13")),
            shoot(ShootBuilder::new("garden-p", "s").workerless()),
            true,
        ),
        (
            "pods only, in a reserved range: the half listed is still checked",
            SeedBuilder::new("seed").shoot_defaults(Some("240.1.0.0/16"), None),
            shoot(ShootBuilder::new("garden-p", "s")),
            false,
        ),
        (
            "services only, IPv6 overlapping the seed's pods: still checked",
            SeedBuilder::new("seed")
                .networks("2001:db8:1::/48", "2001:db8:2::/48", "2001:db8:3::/108")
                .shoot_defaults(None, Some("2001:db8:2:1::/112")),
            ShootBuilder::new("garden-p", "s")
                .ip_families(&["IPv6"])
                .nodes("2001:db8:4::/64")
                .build(),
            false,
        ),
    ];
    for (name, seed, shoot, fits) in cases {
        let snap = snapshot(&[seed], &[]);
        let got = both(&shoot, &snap);
        assert_eq!(got.is_ok(), fits, "{name}: {got:?}");
        if let Err(e) = got {
            assert!(
                e.contains("have networks that overlap the shoot's"),
                "{name}: {e}"
            );
        }
    }
}

/// Upstream's validation refuses a seed listing one taint twice (key and value): only a
/// hand-written file reaches the scheduler with one, and it is skipped as malformed.
#[test]
fn a_seed_with_the_same_taint_twice_is_malformed() {
    let snap = snapshot(
        &[SeedBuilder::new("twice")
            .taint("a", Some("b"))
            .taint("a", Some("b"))],
        &[],
    );
    let shoot = ShootBuilder::new("garden-p", "s")
        .toleration("a", Some("b"))
        .build();
    let got = both(&shoot, &snap).unwrap_err();
    assert!(got.contains("1 seed(s) are malformed"), "{got}");
}

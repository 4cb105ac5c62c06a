//! Property tests with a fixed budget: generated landscapes through `schedule()`, and arbitrary
//! text through every parser. They run in CI on every change.

use chrono::{DateTime, Utc};
use gardener_scheduler::chain::parse_cron;
use gardener_scheduler::config::load_str;
use gardener_scheduler::context::ShootContext;
use gardener_scheduler::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
use gardener_scheduler::predicates::Stage;
use gardener_scheduler::profile::Profile;
use gardener_scheduler::schedule::schedule;
use gardener_scheduler::simulate::Landscape;
use gardener_scheduler::snapshot::{SeedInfo, Snapshot, parse_region_distances};
use proptest::prelude::*;

const REGIONS: [&str; 5] = [
    "eu-west-1",
    "eu-central-1",
    "us-east-1",
    "ap-south-1",
    "eu-north-1",
];
const PROVIDERS: [&str; 2] = ["aws", "gcp"];
const STRATEGIES: [&str; 4] = ["SameRegion", "MinimalDistance", "RegionPrefix", "Scored"];

#[derive(Clone, Debug)]
struct GenSeed {
    region: usize,
    provider: usize,
    capacity: Option<u8>,
    tainted: bool,
    zones: u8,
    ready: bool,
}

#[derive(Clone, Debug)]
struct GenShoot {
    region: usize,
    provider: usize,
    tolerates: bool,
    zone_ha: bool,
    placed_on: Option<usize>,
}

fn gen_seed() -> impl Strategy<Value = GenSeed> {
    (
        0..REGIONS.len(),
        0..PROVIDERS.len(),
        proptest::option::of(0u8..4),
        any::<bool>(),
        1u8..4,
        prop::bool::weighted(0.9),
    )
        .prop_map(
            |(region, provider, capacity, tainted, zones, ready)| GenSeed {
                region,
                provider,
                capacity,
                tainted,
                zones,
                ready,
            },
        )
}

fn gen_shoot(seeds: usize) -> impl Strategy<Value = GenShoot> {
    (
        0..REGIONS.len(),
        0..PROVIDERS.len(),
        any::<bool>(),
        prop::bool::weighted(0.2),
        proptest::option::of(0..seeds.max(1)),
    )
        .prop_map(
            |(region, provider, tolerates, zone_ha, placed_on)| GenShoot {
                region,
                provider,
                tolerates,
                zone_ha,
                placed_on,
            },
        )
}

fn landscape() -> impl Strategy<Value = (Vec<GenSeed>, Vec<GenShoot>, Vec<GenShoot>, usize)> {
    prop::collection::vec(gen_seed(), 1..12).prop_flat_map(|seeds| {
        let n = seeds.len();
        (
            Just(seeds),
            prop::collection::vec(gen_shoot(n), 0..30),
            prop::collection::vec(gen_shoot(n), 1..6),
            0..STRATEGIES.len(),
        )
    })
}

fn seed_obj(i: usize, s: &GenSeed) -> gardener_scheduler::api::Seed {
    let zones: Vec<String> = (0..s.zones).map(|z| format!("z{z}")).collect();
    let mut b = SeedBuilder::new(&format!("seed-{i:02}"))
        .provider(PROVIDERS[s.provider])
        .region(REGIONS[s.region])
        .zones(&zones.iter().map(String::as_str).collect::<Vec<_>>());
    if let Some(c) = s.capacity {
        b = b.allocatable("shoots", &c.to_string());
    }
    if s.tainted {
        b = b.taint("seed.gardener.cloud/protected", None);
    }
    if !s.ready {
        b = b.condition("GardenletReady", "False");
    }
    b.build()
}

fn shoot_obj(name: &str, s: &GenShoot) -> gardener_scheduler::api::Shoot {
    let mut b = ShootBuilder::new("garden-p", name)
        .provider(PROVIDERS[s.provider])
        .region(REGIONS[s.region])
        .cloud_profile(PROVIDERS[s.provider]);
    if s.tolerates {
        b = b.toleration("seed.gardener.cloud/protected", None);
    }
    if s.zone_ha {
        b = b.failure_tolerance("zone");
    }
    if let Some(p) = s.placed_on {
        b = b.seed(&format!("seed-{p:02}"));
    }
    b.build()
}

fn build_snapshot(
    seeds: &[gardener_scheduler::api::Seed],
    placed: &[gardener_scheduler::api::Shoot],
) -> Snapshot {
    let mut snap = Snapshot::new();
    for p in PROVIDERS {
        snap.upsert_cloud_profile(
            &CloudProfileBuilder::new(p)
                .provider_types(&["aws", "gcp"])
                .build(),
        );
    }
    for s in seeds {
        snap.upsert_seed(s);
    }
    for s in placed {
        snap.upsert_shoot(s);
    }
    snap
}

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-01T00:00:00Z")
        .unwrap()
        .to_utc()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, .. ProptestConfig::default() })]

    #[test]
    fn chosen_seed_passes_every_filter_has_capacity_and_order_does_not_matter(
        (seeds, placed, pending, strategy) in landscape()
    ) {
        let cfg = load_str(&format!("schedulers:\n  shoot:\n    candidateDeterminationStrategy: {}\n", STRATEGIES[strategy])).unwrap();
        let profile = Profile::from_config("default", &cfg.schedulers.shoot).unwrap();
        let seed_objs: Vec<_> = seeds.iter().enumerate().map(|(i, s)| seed_obj(i, s)).collect();
        let placed_objs: Vec<_> = placed.iter().enumerate().filter(|(_, s)| s.placed_on.is_some()).map(|(i, s)| shoot_obj(&format!("placed-{i}"), s)).collect();
        let snap = build_snapshot(&seed_objs, &placed_objs);
        let mut rev_seeds = seed_objs.clone();
        rev_seeds.reverse();
        let mut rev_placed = placed_objs.clone();
        rev_placed.reverse();
        let snap_rev = build_snapshot(&rev_seeds, &rev_placed);

        for (i, p) in pending.iter().enumerate() {
            let mut p = p.clone();
            p.placed_on = None;
            let shoot = shoot_obj(&format!("new-{i}"), &p);
            let a = schedule(&shoot, &snap, &profile, now());
            let b = schedule(&shoot, &snap_rev, &profile, now());
            prop_assert_eq!(&a, &b, "result depends on input order");
            if let Ok(d) = a {
                let info: &SeedInfo = snap.seed(&d.seed).unwrap();
                let cx = ShootContext::new(&shoot, &snap, now()).unwrap();
                for stage in &profile.stages {
                    if let Stage::Filter(f) = stage {
                        prop_assert!(f.filter(&cx, info, &snap).is_ok(), "{} rejects chosen seed {}", f.name(), d.seed);
                    }
                }
                if let Some(cap) = info.allocatable_shoots() {
                    prop_assert!(snap.usage().shoots_on(&d.seed) < cap, "placed on a full seed");
                }
                prop_assert!(d.rejected.iter().all(|r| r.seed != d.seed));
                prop_assert_eq!(d.rejected.len() + d.ranking.len(), seeds.len());
            }
        }
    }

    #[test]
    fn config_parsing_never_panics(text in "\\PC{0,200}") {
        let _ = load_str(&text);
    }

    #[test]
    fn config_parsing_of_structured_garbage_never_panics(
        key in prop::sample::select(vec!["schedulers", "leaderElection", "server", "logLevel", "clientConnection", "schedulers.shoot"]),
        value in prop::sample::select(vec!["-1", "0", "1e309", "null", "[]", "{}", "\"x\"", "{a: 1}", "[1, {b: c}]", "99999999999999999999", "0s", "-5m"]),
    ) {
        let yaml = if let Some((a, b)) = key.split_once('.') {
            format!("{a}:\n  {b}: {value}\n")
        } else {
            format!("{key}: {value}\n")
        };
        let _ = load_str(&yaml);
    }

    #[test]
    fn manifest_parsing_never_panics(text in "\\PC{0,300}") {
        let mut l = Landscape::default();
        let _ = l.add_text(std::path::Path::new("fuzz.yaml"), &text);
    }

    #[test]
    fn manifest_documents_with_wrong_types_are_errors_not_panics(
        kind in prop::sample::select(vec!["Shoot", "Seed", "CloudProfile", "Project", "NamespacedCloudProfile"]),
        field in prop::sample::select(vec!["spec", "status", "metadata", "spec.provider", "spec.taints", "spec.networks", "status.allocatable"]),
        value in prop::sample::select(vec!["7", "\"x\"", "[1, 2]", "{zones: 3}", "null", "-1"]),
    ) {
        let nested = match field.split_once('.') {
            Some((a, b)) => format!("{a}:\n  {b}: {value}\n"),
            None => format!("{field}: {value}\n"),
        };
        let text = format!("apiVersion: core.gardener.cloud/v1beta1\nkind: {kind}\nmetadata: {{name: x, namespace: y}}\n{nested}");
        let mut l = Landscape::default();
        let _ = l.add_text(std::path::Path::new("fuzz.yaml"), &text);
    }

    #[test]
    fn region_distance_parsing_never_panics(text in "\\PC{0,200}") {
        let _ = parse_region_distances(&text);
    }

    #[test]
    fn cron_parsing_never_panics(text in "[0-9*/,@A-Za-z -]{0,40}") {
        let _ = parse_cron(&text);
    }
}

#[test]
fn yaml_alias_bombs_in_region_configmaps_are_bounded() {
    let mut bomb = String::from("a: &a [x, x, x, x, x, x, x, x, x]\n");
    for i in 0..12 {
        let prev = if i == 0 {
            "a".to_string()
        } else {
            format!("l{}", i - 1)
        };
        bomb.push_str(&format!("l{i}: &l{i} [*{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}, *{prev}]\n"));
    }
    // Expanding this would create 9^13 nodes; the parser must refuse instead of hanging.
    let err = parse_region_distances(&bomb).unwrap_err();
    assert!(err.contains("not a mapping of region to distance"), "{err}");
}

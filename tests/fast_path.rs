//! The decision pipeline's fast mode (`decide`: the region strategy's candidates first,
//! verdicts and totals only) against its explain mode (`schedule`: every stage over every seed,
//! every rejection and score detail recorded) on generated landscapes, shoots and profiles:
//! every predicate, every strategy, the opt-in filters, region ConfigMaps (one of them
//! malformed) and failures. Both must return the same seed, the same ranking with the same
//! scores and details, and the same error; and every filter's fast answer for the shoot (its
//! check over the snapshot's columns, or `passes`) must be its `filter`'s verdict on every seed,
//! so that no plugin's fast check can drift from what it explains. 512 cases in CI;
//! `PROPTEST_CASES=N` raises the budget.

use std::collections::BTreeMap;

use chrono::{DateTime, Utc};
use gardener_scheduler::api::{ConfigMap, ObjectMeta, Seed, Shoot};
use gardener_scheduler::compile::load_str;
use gardener_scheduler::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
use gardener_scheduler::profile::Profile;
use gardener_scheduler::schedule::{
    FitError, check_disagreements, decide, decide_scores, schedule,
};
use gardener_scheduler::snapshot::Snapshot;
use gardener_scheduler::{predicates, priorities, strategies};
use proptest::prelude::*;

const PROVIDERS: [&str; 3] = ["aws", "gcp", "azure"];
const REGIONS: [&str; 7] = [
    "eu-west-1",
    "eu-central-1",
    "eu-north-1",
    "us-east-1",
    "ap-south-1",
    "europe-west1",
    "lab-1",
];
const DEFAULT_DOMAIN: &str = "dom.example.com";

/// `n` bits of `b` from bit `at`, as a number below `m`.
fn pick(b: u64, at: u32, m: u64) -> usize {
    ((b >> at) % m) as usize
}

fn seed_obj(i: usize, b: u64) -> Seed {
    let zones = ["a", "b", "c"];
    let mut s = SeedBuilder::new(&format!("seed-{i:02}"))
        .provider(PROVIDERS[pick(b, 0, 3)])
        .region(REGIONS[pick(b, 2, 7)])
        .zones(&zones[..1 + pick(b, 9, 3)]);
    match pick(b, 5, 4) {
        0 => {}
        // Room for 0, 1 and 2 shoots, written as upstream's `Value()` reads them (rounded up).
        n => s = s.allocatable("shoots", ["0", "500m", "1500m"][n - 1]),
    }
    match pick(b, 7, 4) {
        2 => s = s.taint("seed.gardener.cloud/protected", None),
        3 => s = s.taint("x", None),
        _ => {}
    }
    match pick(b, 11, 4) {
        2 => s = s.zone_mode("Prefer"),
        3 => s = s.zone_mode("Enforce"),
        _ => {}
    }
    if pick(b, 13, 10) == 0 {
        s = s.condition("GardenletReady", "False");
    }
    if pick(b, 17, 12) == 0 {
        s = s.visible(false);
    }
    if pick(b, 21, 3) == 0 {
        s = s.access_restriction("eu-access-only");
    }
    if pick(b, 50, 3) == 0 {
        s = s.access_restriction("sovereign");
    }
    if pick(b, 52, 3) == 0 {
        s = s.access_restriction("support-eu-only");
    }
    if pick(b, 23, 4) == 0 {
        s = s.default_domain(DEFAULT_DOMAIN);
    }
    if pick(b, 26, 3) == 0 {
        s = s.label("env", "dev");
    }
    if pick(b, 28, 15) == 0 {
        s = s.annotation(
            "shoot.gardener.cloud/emergency-stop-reconciliations",
            "true",
        );
    }
    if pick(b, 32, 4) == 0 {
        s = s.networks("10.250.0.0/16", "100.96.0.0/11", "100.64.0.0/13");
    }
    if pick(b, 35, 20) == 0 {
        s = s.deleting();
    }
    match pick(b, 40, 5) {
        0 => s = s.shoot_defaults(Some("100.96.0.0/11"), Some("100.64.0.0/13")),
        1 => s = s.shoot_defaults(Some("240.1.0.0/16"), None),
        2 => s = s.shoot_defaults(None, Some("fd8f:6d53:b97a:1::/112")),
        _ => {}
    }
    match pick(b, 44, 4) {
        0 => s = s.allocatable("cpu", "16").allocatable("memory", "64Gi"),
        1 => s = s.allocatable("cpu", "3"),
        2 => s = s.allocatable("cpu", "0"),
        _ => {}
    }
    s.build()
}

fn shoot_obj(namespace: &str, name: &str, b: u64) -> Shoot {
    let provider = PROVIDERS[pick(b, 0, 3)];
    let mut s = ShootBuilder::new(namespace, name)
        .provider(provider)
        .region(REGIONS[pick(b, 2, 7)])
        .cloud_profile(provider);
    match pick(b, 5, 7) {
        0 => s = s.purpose("testing"),
        1 => s = s.purpose("production"),
        _ => {}
    }
    if pick(b, 8, 3) == 0 {
        s = s.toleration("seed.gardener.cloud/protected", None);
    }
    if pick(b, 10, 4) == 0 {
        s = s.toleration("x", None);
    }
    if pick(b, 12, 5) == 0 {
        s = s.failure_tolerance("zone");
    }
    if pick(b, 14, 6) == 0 {
        s = s.control_plane_zones(&["a"]);
    }
    match pick(b, 16, 3) {
        1 => s = s.worker_zones(&["a"]),
        2 => s = s.worker_zones(&["c", "d"]),
        _ => {}
    }
    if pick(b, 18, 4) == 0 {
        s = s.access_restriction("eu-access-only");
    }
    if pick(b, 30, 4) == 0 {
        s = s.access_restriction("sovereign");
    }
    match pick(b, 20, 6) {
        0 => s = s.domain(&format!("{name}.p.{DEFAULT_DOMAIN}")),
        1 => s = s.domain(&format!("other.{DEFAULT_DOMAIN}")),
        2 => s = s.domain("x.unrelated.org"),
        _ => {}
    }
    if pick(b, 23, 8) == 0 {
        s = s.seed_selector("env", "dev");
    }
    match pick(b, 26, 6) {
        0 => s = s.nodes("10.250.0.0/16"),
        1 => s = s.ip_families(&["IPv6"]).nodes("2001:db8::/64"),
        2 => s = s.ip_families(&["IPv4", "IPv6"]).pods("100.96.0.0/11"),
        _ => {}
    }
    s.build()
}

fn profile(b: u64) -> Profile {
    let mut text = format!(
        "schedulers:\n  shoot:\n    candidateDeterminationStrategy: {}\n",
        strategies::REGISTRY[pick(b, 0, strategies::REGISTRY.len() as u64)].0
    );
    match pick(b, 2, 2) + 2 * pick(b, 8, 2) {
        // Every registered priority (the test-only ones too) with its own example arguments,
        // each in about half of these profiles: a priority registered needs nothing here.
        0 => {
            let priorities: Vec<String> = priorities::configurable()
                .enumerate()
                .filter(|(k, _)| b.rotate_left(23 + 5 * *k as u32) % 2 == 1)
                .map(|(k, (name, args))| {
                    let weight = 1 + b.rotate_left(11 + 3 * k as u32) % 3;
                    format!("    - name: {name}\n      weight: {weight}\n      args: {args}\n")
                })
                .collect();
            if !priorities.is_empty() {
                text.push_str("    priorities:\n");
                text.extend(priorities);
            }
        }
        1 => text.push_str(
            "    priorities:
    - name: LatencyDistance
      weight: 10
      args: {maxLatencyMs: 300, fallbackFactor: 10}
    - name: ProjectAntiAffinity
      weight: 1
      args: {topology: seed}
    - name: ResourceFit
      weight: 1
      args:
        strategy: LeastAllocated
        controlPlaneRequests:
        - {purpose: production, requests: {cpu: \"4\", memory: 16Gi}}
        - {requests: {cpu: \"2\", memory: 8Gi}}
    - name: ShootCount
      weight: 0.1
      args: {relativeToCapacity: true}
",
        ),
        2 => text.push_str(
            "    priorities:
    - name: ProjectAntiAffinity
      weight: 2
      args: {topology: region}
    - name: ResourceFit
      weight: 1
      args:
        strategy: MostAllocated
        resources: [{name: shoots, weight: 1}, {name: cpu, weight: 2}]
        controlPlaneRequests:
        - {requests: {cpu: \"2\"}}
    - name: ShootCount
      weight: 1
",
        ),
        _ => text.push_str(
            "    priorities:
    - name: CapacityPressure
      weight: 10
      args: {maxLatencyMs: 300, plannedUtilisation: 0.85}
    - name: CarbonIntensity
      weight: 1
      args: {pointsFile: example/carbon-forecast.json, regionLocations: {eu-west-1: IE, eu-central-1: DE}}
    - name: LatencyDistance
      weight: 1
      args: {matrix: {eu-west-1: {eu-central-1: 20, us-east-1: 80}}, maxLatencyMs: 200}
    - name: ShootCount
      weight: 0.1
      args: {relativeToCapacity: true}
",
        ),
    }
    // Every configurable filter (the test-only ones too) with its own example arguments, each
    // in about half the profiles: a filter registered needs nothing here.
    let filters: Vec<String> = predicates::configurable()
        .enumerate()
        .filter(|(k, _)| pick(b, 40 + *k as u32, 2) == 1)
        .map(|(_, (name, args))| format!("    - name: {name}\n      args: {args}\n"))
        .collect();
    if !filters.is_empty() {
        text.push_str("    filters:\n");
        text.extend(filters);
    }
    let cfg = load_str(&text).unwrap();
    Profile::from_config("default", &cfg.config.schedulers.shoot).unwrap()
}

/// A region ConfigMap for the aws and gcp CloudProfiles: none, valid rows, or one row that
/// does not parse.
fn region_config(b: u64) -> Option<ConfigMap> {
    let mut data = BTreeMap::from([
        (
            "eu-north-1".to_string(),
            "eu-west-1: 10\neu-central-1: 20\nus-east-1: 90\n".to_string(),
        ),
        (
            "eu-west-1".to_string(),
            "eu-central-1: 5\nlab-1: -3\n".to_string(),
        ),
        (
            "us-east-1".to_string(),
            "ap-south-1: 4294967296\n".to_string(),
        ),
    ]);
    match pick(b, 5, 3) {
        0 => return None,
        1 => {}
        _ => {
            data.insert("eu-central-1".into(), "eu-west-1: [not a distance".into());
        }
    }
    Some(ConfigMap {
        metadata: ObjectMeta {
            name: Some("regions".into()),
            namespace: Some("garden".into()),
            labels: Some(BTreeMap::from([(
                "scheduling.gardener.cloud/purpose".to_string(),
                "region-config".to_string(),
            )])),
            annotations: Some(BTreeMap::from([(
                "scheduling.gardener.cloud/cloudprofiles".to_string(),
                "aws,gcp".to_string(),
            )])),
            ..Default::default()
        },
        data: Some(data),
        ..Default::default()
    })
}

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-01T00:00:00Z")
        .unwrap()
        .to_utc()
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(512)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, .. ProptestConfig::default() })]

    #[test]
    fn fast_mode_decides_as_explain_mode(
        seeds in prop::collection::vec(any::<u64>(), 1..16),
        placed in prop::collection::vec((0usize..16, any::<u64>(), any::<bool>()), 0..30),
        pending in prop::collection::vec(any::<u64>(), 1..6),
        config in any::<u64>(),
    ) {
        let profile = profile(config);
        let mut snap = Snapshot::new();
        for p in PROVIDERS {
            let mut cp = CloudProfileBuilder::new(p).provider_types(&["aws", "gcp", "azure"]);
            if p == "gcp" {
                cp = cp.match_label("env", "dev");
            }
            snap.upsert_cloud_profile(&cp.build());
        }
        if let Some(cm) = region_config(config) {
            snap.upsert_config_map(&cm);
        }
        for (i, b) in seeds.iter().enumerate() {
            snap.upsert_seed(&seed_obj(i, *b));
        }
        for (i, (on, b, other_project)) in placed.iter().enumerate() {
            let namespace = if *other_project { "garden-q" } else { "garden-p" };
            let shoot = shoot_obj(namespace, &format!("placed-{i}"), *b);
            let mut shoot = shoot;
            shoot.spec.seed_name = Some(format!("seed-{:02}", on % seeds.len()));
            snap.upsert_shoot(&shoot);
        }
        // In half the cases the declared columns are built before any decision (as the
        // instruction bench does); then no decision may need one its profile did not declare.
        let declared = (pick(config, 50, 2) == 1).then(|| {
            snap.columns().build_declared(&profile.columns());
            snap.columns().declared_built()
        });
        for (i, b) in pending.iter().enumerate() {
            let shoot = shoot_obj("garden-p", &format!("web{i}"), *b);
            if let Ok(found) = check_disagreements(&shoot, &snap, &profile, now()) {
                prop_assert!(found.is_empty(), "fast checks that are not their filter: {found:?}");
            }
            let fast = decide(&shoot, &snap, &profile, now());
            let explain = schedule(&shoot, &snap, &profile, now());
            if let Some(built) = declared {
                prop_assert_eq!(snap.columns().declared_built(), built, "a column no stage declared");
            }
            // Placed where it went, so the next decision sees usage changed after the
            // snapshot's per-seed data were last used.
            let placed_on = fast.as_ref().ok().map(|d| d.seed.to_string());
            match (fast, explain) {
                (Ok(fast), Ok(explain)) => {
                    prop_assert_eq!(&fast.seed, &explain.seed);
                    prop_assert_eq!(&fast.profile, &explain.profile);
                    // The winner with its details; Debug text compares every field exactly,
                    // a NaN raw value included.
                    prop_assert_eq!(fast.ranking.len(), 1, "fast mode ranks only the winner");
                    prop_assert_eq!(format!("{:?}", fast.ranking[0]), format!("{:?}", explain.ranking[0]));
                    prop_assert!(fast.rejected.is_empty(), "fast mode records no rejections");
                    // Every feasible seed's total, normalised scores and raw values, as the
                    // fast mode computes them.
                    {
                        let scores = decide_scores(&shoot, &snap, &profile, now()).unwrap();
                        prop_assert_eq!(scores.seeds.len(), explain.ranking.len());
                        let k = profile.priorities.len();
                        for r in &explain.ranking {
                            let i = scores.seeds.iter().position(|s| *s == r.seed);
                            prop_assert!(i.is_some(), "{} not scored in fast mode", r.seed);
                            let i = i.unwrap();
                            prop_assert_eq!(scores.totals[i], r.total, "total of {}", r.seed);
                            for (j, p) in r.priorities.iter().enumerate() {
                                let (score, raw) = scores.scores[i * k + j];
                                prop_assert_eq!(
                                    format!("{score:?} {raw:?}"),
                                    format!("{:?} {:?}", p.score, p.raw),
                                    "{} of {}", p.name, r.seed
                                );
                            }
                        }
                    }
                }
                (Err(fast), Err(explain)) => {
                    prop_assert_eq!(fast.to_string(), explain.to_string());
                    // Fast mode counts the rejections explain mode lists, in the same order.
                    if let FitError::NoFit { rejected, .. } = &fast {
                        prop_assert!(rejected.is_empty(), "fast mode lists no rejections");
                    }
                    prop_assert_eq!(fast, explain.counted_only());
                }
                (fast, explain) => prop_assert!(false, "fast {fast:?}\nexplain {explain:?}"),
            }
            if let Some(seed) = placed_on {
                let mut shoot = shoot;
                shoot.spec.seed_name = Some(seed);
                snap.upsert_shoot(&shoot);
            }
        }
    }
}

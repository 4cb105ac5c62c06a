//! Property tests with a fixed budget: generated landscapes through `schedule()`, generated
//! profile chains through the schedule evaluator, and arbitrary text through every parser. They
//! run in CI on every change with 256 cases each; `PROPTEST_CASES=N` raises the budget (see
//! docs/operations/reliability.md for the recorded runs).

use chrono::{DateTime, Utc};
use gardener_scheduler::chain::{ProfileChain, Selection, parse_cron};
use gardener_scheduler::compile::load_str;
use gardener_scheduler::context::ShootContext;
use gardener_scheduler::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
use gardener_scheduler::predicates::Stage;
use gardener_scheduler::profile::Profile;
use gardener_scheduler::schedule::schedule;
use gardener_scheduler::simulate::Landscape;
use gardener_scheduler::snapshot::{SeedInfo, Snapshot, parse_region_distances};
use gardener_scheduler::strategies;
use proptest::prelude::*;

const REGIONS: [&str; 5] = [
    "eu-west-1",
    "eu-central-1",
    "us-east-1",
    "ap-south-1",
    "eu-north-1",
];
const PROVIDERS: [&str; 2] = ["aws", "gcp"];

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
            0..strategies::REGISTRY.len(),
        )
    })
}

/// A permutation of `v` drawn from `seed` (Fisher-Yates with a xorshift generator).
fn permute<T>(v: &mut [T], seed: u64) {
    let mut x = seed | 1;
    for i in (1..v.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        v.swap(i, (x % (i as u64 + 1)) as usize);
    }
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

/// Cases per property: 256 in CI, `PROPTEST_CASES` when set.
fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(256)
}

fn now() -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-01T00:00:00Z")
        .unwrap()
        .to_utc()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, .. ProptestConfig::default() })]

    #[test]
    fn chosen_seed_passes_every_filter_has_capacity_and_order_does_not_matter(
        (seeds, placed, pending, strategy) in landscape(),
        shuffle in any::<u64>(),
    ) {
        let cfg = load_str(&format!("schedulers:\n  shoot:\n    candidateDeterminationStrategy: {}\n", strategies::REGISTRY[strategy].0)).unwrap();
        let profile = Profile::from_config("default", &cfg.config.schedulers.shoot).unwrap();
        let seed_objs: Vec<_> = seeds.iter().enumerate().map(|(i, s)| seed_obj(i, s)).collect();
        let placed_objs: Vec<_> = placed.iter().enumerate().filter(|(_, s)| s.placed_on.is_some()).map(|(i, s)| shoot_obj(&format!("placed-{i}"), s)).collect();
        let snap = build_snapshot(&seed_objs, &placed_objs);
        let mut rev_seeds = seed_objs.clone();
        permute(&mut rev_seeds, shuffle);
        let mut rev_placed = placed_objs.clone();
        permute(&mut rev_placed, shuffle.rotate_left(17));
        let snap_rev = build_snapshot(&rev_seeds, &rev_placed);

        for (i, p) in pending.iter().enumerate() {
            let mut p = p.clone();
            p.placed_on = None;
            let shoot = shoot_obj(&format!("new-{i}"), &p);
            let a = schedule(&shoot, &snap, &profile, now());
            let b = schedule(&shoot, &snap_rev, &profile, now());
            prop_assert_eq!(&a, &b, "result depends on input order");
            // and on nothing but its inputs
            prop_assert_eq!(&a, &schedule(&shoot, &snap, &profile, now()));
            if let Ok(d) = a {
                let info: &SeedInfo = snap.seed(&d.seed).unwrap();
                let cx = ShootContext::new(&shoot, &snap, now()).unwrap();
                for stage in &profile.stages {
                    if let Stage::Filter(f) = stage {
                        let state = f.prepare(&cx).unwrap();
                        prop_assert!(f.filter(&cx, &state, info, &snap).is_ok(), "{} rejects chosen seed {}", f.name(), d.seed);
                    }
                }
                if let Some(cap) = info.allocatable_shoots() {
                    prop_assert!(snap.usage().shoots_on(&d.seed) < cap, "placed on a full seed");
                }
                prop_assert!(d.rejected.iter().all(|r| *r.seed != *d.seed));
                prop_assert_eq!(d.rejected.len() + d.ranking.len(), seeds.len());
            }
        }
    }

    #[test]
    fn config_parsing_never_panics(text in "\\PC{0,200}") {
        let _ = load_str(&text);
    }

    #[test]
    fn manifest_parsing_never_panics(text in "\\PC{0,300}") {
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

/// One cron field over `lo..=hi`: `*`, a value, a range, a step, or a list.
fn cron_field(lo: u32, hi: u32) -> impl Strategy<Value = String> {
    prop_oneof![
        Just("*".to_string()),
        (lo..=hi).prop_map(|v| v.to_string()),
        (lo..=hi, lo..=hi).prop_map(|(a, b)| format!("{}-{}", a.min(b), a.max(b))),
        (1..=hi.max(2)).prop_map(|k| format!("*/{k}")),
        (lo..=hi, lo..=hi).prop_map(|(a, b)| format!("{a},{b}")),
    ]
}

fn cron() -> impl Strategy<Value = String> {
    prop_oneof![
        1 => prop::sample::select(vec!["@hourly", "@daily", "@weekly", "@monthly", "@yearly"]).prop_map(str::to_string),
        6 => (cron_field(0, 59), cron_field(0, 23), cron_field(1, 31), cron_field(1, 12), cron_field(0, 6))
            .prop_map(|(m, h, dom, mon, dow)| format!("{m} {h} {dom} {mon} {dow}")),
    ]
}

/// A profile entry's `schedule`: a `between` range, a cron-started period, or both. Zones with
/// DST, half-hour offsets and a 30-minute DST shift (Lord Howe) are in the mix.
fn schedule_yaml() -> impl Strategy<Value = String> {
    let between = proptest::option::of((0i64..3 * 365 * 24, 1i64..60 * 24)).prop_map(|b| {
        b.map(|(start_h, len_h)| {
            let start = now() - chrono::TimeDelta::days(365) + chrono::TimeDelta::hours(start_h);
            let end = start + chrono::TimeDelta::hours(len_h);
            format!(
                "between: {{start: \"{}\", end: \"{}\"}}",
                start.to_rfc3339(),
                end.to_rfc3339()
            )
        })
    });
    let period = proptest::option::of((
        cron(),
        prop::sample::select(vec![
            "UTC",
            "Europe/Berlin",
            "America/New_York",
            "Asia/Kathmandu",
            "Australia/Lord_Howe",
            "Pacific/Chatham",
        ]),
        proptest::option::of(prop::sample::select(vec![
            "1m", "30m", "90m", "1d", "36h", "8d",
        ])),
    ))
    .prop_map(|p| {
        p.map(|(cron, tz, d)| {
            let d = d.map(|d| format!(", duration: {d}")).unwrap_or_default();
            format!("activePeriod: {{startCron: \"{cron}\", timezone: {tz}{d}}}")
        })
    });
    (between, period).prop_map(|(b, p)| {
        let parts: Vec<String> = b.into_iter().chain(p).collect();
        format!("{{{}}}", parts.join(", "))
    })
}

/// A chain of up to four scheduled entries (freezes or profiles), with an unconditional
/// default at the end or not, so that "nothing active" happens too.
fn chain_yaml() -> impl Strategy<Value = String> {
    (
        prop::collection::vec((schedule_yaml(), any::<bool>()), 1..4),
        any::<bool>(),
    )
        .prop_map(|(entries, fallback)| {
            let mut y = String::from("schedulers:\n  shoot:\n    profiles:\n");
            for (i, (schedule, freeze)) in entries.iter().enumerate() {
                let what = if *freeze {
                    "freeze: true"
                } else {
                    "profile: {}"
                };
                y.push_str(&format!(
                    "    - {{id: e{i}, schedule: {schedule}, {what}}}\n"
                ));
            }
            if fallback {
                y.push_str("    - {id: default, profile: {}}\n");
            }
            y
        })
}

fn active_id(chain: &ProfileChain, t: DateTime<Utc>) -> Option<String> {
    chain.active(t).map(|e| e.id.clone())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, .. ProptestConfig::default() })]

    /// The evaluator's promise, checked at random instants: nothing changes before the next
    /// change it reports, a deferral names a retry time in the future, and the timeline is
    /// ordered and only lists real switches.
    #[test]
    fn the_schedule_evaluator_reports_every_change_and_none_too_early(
        yaml in chain_yaml(),
        offset_min in 0i64..2 * 365 * 24 * 60,
    ) {
        let cfg = match load_str(&yaml) {
            Ok(cfg) => cfg,
            // An impossible date (`* * 30 2 *`) is refused by the configuration check, as it
            // must be; such a chain has no schedule to evaluate.
            Err(e) if e.to_string().contains("never fires") => {
                return Err(TestCaseError::reject("a startCron that never fires"));
            }
            Err(e) => return Err(TestCaseError::fail(format!("{e}\n{yaml}"))),
        };
        let chain = ProfileChain::from_config(&cfg.config.schedulers.shoot).unwrap();
        let t = now() - chrono::TimeDelta::days(365) + chrono::TimeDelta::minutes(offset_min)
            + chrono::TimeDelta::seconds(offset_min % 61);
        let here = active_id(&chain, t);
        match chain.select(t) {
            Selection::Profile { entry, .. } => prop_assert_eq!(Some(entry.to_string()), here.clone()),
            Selection::Deferred { retry_at, .. } => {
                if let Some(r) = retry_at {
                    prop_assert!(r > t, "retry at {} is not after {}", r, t);
                    prop_assert_ne!(active_id(&chain, r), here.clone(), "nothing switches at the retry time");
                }
            }
        }
        if let Some(next) = chain.next_change(t) {
            prop_assert!(next > t);
            for probe in [t + (next - t) / 2, next - chrono::TimeDelta::seconds(1)] {
                if probe > t {
                    prop_assert_eq!(active_id(&chain, probe), here.clone(), "changed at {} before the reported {}", probe, next);
                }
            }
        }
        let timeline = chain.timeline(t, t + chrono::TimeDelta::days(8));
        prop_assert!(timeline.truncated_at.is_none());
        let timeline = timeline.changes;
        prop_assert_eq!(timeline[0].0, t);
        for w in timeline.windows(2) {
            prop_assert!(w[0].0 < w[1].0);
            prop_assert_ne!(&w[0].1, &w[1].1);
        }
    }

    #[test]
    fn generated_configurations_load_or_fail_with_a_field_path(
        strategy in prop::sample::select(vec!["SameRegion", "MinimalDistance", "RegionPrefix", "Scored", "Nearest"]),
        syncs in -2i64..2000,
        retry in prop::sample::select(vec!["0s", "1ms", "15s", "-5s", "1h", "10", "fast"]),
        backoff in (prop::sample::select(vec!["1s", "0s", "10m"]), prop::sample::select(vec!["1000s", "1s", "500ms"])),
        qps in prop::sample::select(vec!["50", "0", "-1", "1e40", "NaN", "\"x\""]),
        port in -1i64..70000,
        weight in prop::sample::select(vec!["1", "0", "-3", "1e400", "2.5"]),
        // every registered priority, and a name that is none
        priority in prop::sample::select(gardener_scheduler::priorities::configurable().map(|(n, _)| n).chain(["Latency"]).collect::<Vec<_>>()),
    ) {
        let yaml = format!(
            "clientConnection: {{qps: {qps}}}\nserver:\n  metrics: {{port: {port}}}\nschedulers:\n  shoot:\n    concurrentSyncs: {syncs}\n    retrySyncPeriod: {retry}\n    candidateDeterminationStrategy: {strategy}\n    backoff: {{initial: {}, max: {}}}\n    priorities: [{{name: {priority}, weight: {weight}}}]\n",
            backoff.0, backoff.1
        );
        match load_str(&yaml) {
            Ok(cfg) => {
                prop_assert!((1..=1000).contains(&cfg.config.schedulers.shoot.concurrent_syncs));
                prop_assert!(!cfg.config.schedulers.shoot.retry_sync_period.is_zero());
                prop_assert!(cfg.config.schedulers.shoot.backoff.initial <= cfg.config.schedulers.shoot.backoff.max);
                prop_assert!(cfg.config.client_connection.qps.is_finite() && cfg.config.client_connection.qps >= 0.0);
                prop_assert!(ProfileChain::from_config(&cfg.config.schedulers.shoot).is_ok());
            }
            Err(e) => {
                let text = e.to_string();
                prop_assert!(
                    ["clientConnection", "server.metrics", "schedulers.shoot"].iter().any(|p| text.contains(p)),
                    "the error names a field: {}", text
                );
            }
        }
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

/// Every numeric argument of every filter and priority, as `{v}` in a profile: whatever value
/// the configuration holds, it is refused with the field's path, or every decision finishes.
const NUMERIC_ARGS: [(&str, &str); 13] = [
    (
        "filters[0].args.maxLatencyMs",
        "filters: [{name: MaxLatency, args: {maxLatencyMs: {v}}}]",
    ),
    (
        "priorities[0].weight",
        "priorities: [{name: ShootCount, weight: {v}}]",
    ),
    (
        "priorities[0].args.maxLatencyMs",
        "priorities: [{name: LatencyDistance, weight: 1, args: {maxLatencyMs: {v}}}]",
    ),
    (
        "priorities[0].args.fallbackFactor",
        "priorities: [{name: LatencyDistance, weight: 1, args: {fallbackFactor: {v}}}]",
    ),
    (
        "priorities[0].args.maxLatencyMs",
        "priorities: [{name: CapacityPressure, weight: 1, args: {maxLatencyMs: {v}}}]",
    ),
    (
        "priorities[0].args.fallbackFactor",
        "priorities: [{name: CapacityPressure, weight: 1, args: {fallbackFactor: {v}}}]",
    ),
    (
        "priorities[0].args.plannedUtilisation",
        "priorities: [{name: CapacityPressure, weight: 1, args: {plannedUtilisation: {v}}}]",
    ),
    (
        "priorities[0].args.replanThreshold",
        "priorities: [{name: CapacityPressure, weight: 1, args: {replanThreshold: {v}}}]",
    ),
    (
        "priorities[0].args.demand.eu-west-1",
        "priorities: [{name: CapacityPressure, weight: 1, args: {demand: {eu-west-1: {v}, us-east-1: 1}}}]",
    ),
    (
        "priorities[0].args.resources[0].weight",
        "priorities: [{name: ResourceFit, weight: 1, args: {resources: [{name: shoots, weight: {v}}]}}]",
    ),
    (
        "priorities[0].args.controlPlaneRequests[0].requests.cpu",
        "priorities: [{name: ResourceFit, weight: 1, args: {controlPlaneRequests: [{requests: {cpu: {v}}}]}}]",
    ),
    (
        "priorities[0].args.regions.eu-west-1",
        "priorities: [{name: CarbonIntensity, weight: 1, args: {regions: {eu-west-1: {v}}}}]",
    ),
    (
        "priorities[0].args.scale.worst",
        "priorities: [{name: CarbonIntensity, weight: 1, args: {scale: {best: 0, worst: {v}}}}]",
    ),
];

/// Numbers across the whole range of `f64`: every exponent, both signs, zero, the special
/// values, and the small numbers people write.
fn any_number() -> impl Strategy<Value = f64> {
    prop_oneof![
        (-308i32..=308, 1.0f64..10.0, any::<bool>()).prop_map(|(e, m, neg)| if neg {
            -m
        } else {
            m
        } * 10f64.powi(e)),
        any::<f64>(),
        (0u32..2_000_000).prop_map(f64::from),
        Just(0.0),
        Just(f64::MAX),
        Just(f64::NAN),
        Just(f64::INFINITY),
    ]
}

/// `v` as YAML writes it.
fn yaml_number(v: f64) -> String {
    if v.is_nan() {
        ".nan".into()
    } else if v.is_infinite() {
        if v > 0.0 {
            ".inf".into()
        } else {
            "-.inf".into()
        }
    } else {
        format!("{v:e}")
    }
}

/// The decisions of a small landscape, on their own thread: a decision that does not end within
/// the budget (a minute for three seeds, where one takes microseconds) fails the property
/// instead of hanging the suite.
fn decisions_finish(profile: Profile) -> Result<(), String> {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let seeds = [
            ("s1", "eu-west-1"),
            ("s2", "us-east-1"),
            ("s3", "ap-south-1"),
        ]
        .map(|(n, r)| {
            SeedBuilder::new(n)
                .region(r)
                .allocatable("shoots", "3")
                .build()
        });
        let mut snap = build_snapshot(&seeds, &[]);
        for i in 0..6 {
            let region = ["eu-west-1", "us-east-1", "eu-central-1"][i % 3];
            let shoot = ShootBuilder::new("garden-dev", &format!("s{i}"))
                .region(region)
                .cloud_profile("aws")
                .build();
            if let Ok(d) = schedule(&shoot, &snap, &profile, now()) {
                let mut bound = shoot.clone();
                bound.spec.seed_name = Some(d.seed.to_string());
                snap.upsert_shoot(&bound);
            }
        }
        let _ = tx.send(());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(60)) {
        Ok(()) => Ok(()),
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => Err("a decision panicked".into()),
        Err(e) => Err(format!(
            "the decisions did not finish within the budget: {e}"
        )),
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(), failure_persistence: None, .. ProptestConfig::default() })]

    #[test]
    fn every_numeric_plugin_argument_is_refused_at_its_path_or_every_decision_finishes(
        field in 0..NUMERIC_ARGS.len(),
        v in any_number(),
    ) {
        let (path, profile) = NUMERIC_ARGS[field];
        let yaml = format!(
            "schedulers:\n  shoot:\n    candidateDeterminationStrategy: Scored\n    {}\n",
            profile.replace("{v}", &yaml_number(v))
        );
        match load_str(&yaml) {
            Err(e) => {
                let text = e.to_string();
                prop_assert!(
                    text.contains(&format!("schedulers.shoot.{path}")),
                    "{v:e} at {path}: the error names another field: {text}"
                );
            }
            Ok(cfg) => {
                let profile = Profile::from_config("default", &cfg.config.schedulers.shoot)
                    .map_err(|e| TestCaseError::fail(format!("{e:?}")))?;
                decisions_finish(profile).map_err(|e| TestCaseError::fail(format!("{v:e} at {path}: {e}")))?;
            }
        }
    }
}

/// Every top-level configuration key given every kind of wrong value: an error that names the
/// key, or for an empty value (`null`, `{}`) and an unknown field inside a mapping (ignored with
/// a warning) the defaults. All 72 combinations, not a sample.
#[test]
fn configuration_values_of_the_wrong_type_are_errors_that_name_the_key() {
    let mappings = [
        "schedulers",
        "leaderElection",
        "server",
        "clientConnection",
        "schedulers.shoot",
    ];
    let values = [
        "-1",
        "0",
        "1e309",
        "null",
        "[]",
        "{}",
        "\"x\"",
        "{a: 1}",
        "[1, {b: c}]",
        "99999999999999999999",
        "0s",
        "-5m",
    ];
    let mut checked = 0;
    for key in mappings.iter().chain(&["logLevel"]) {
        for value in values {
            let yaml = match key.split_once('.') {
                Some((a, b)) => format!("{a}:\n  {b}: {value}\n"),
                None => format!("{key}: {value}\n"),
            };
            let empty =
                value == "null" || (mappings.contains(key) && matches!(value, "{}" | "{a: 1}"));
            match load_str(&yaml) {
                Ok(_) => assert!(empty, "{key}: {value} was accepted"),
                Err(e) => {
                    let text = e.to_string();
                    assert!(!empty, "{key}: {value} was refused: {text}");
                    assert!(
                        text.contains(&format!("{key}: ")),
                        "{key}: {value}: the error does not name the key: {text}"
                    );
                }
            }
            checked += 1;
        }
    }
    assert_eq!(checked, 72);
}

/// The fields the scheduler reads, each given values of the wrong type, in every kind it reads:
/// the object is left out and recorded in `skipped` with a message naming the field (the file
/// as a whole still loads), and `null` is read as absent. Every combination, not a sample.
#[test]
fn manifest_fields_of_the_wrong_type_skip_their_object_with_the_field_named() {
    // (kind, field, values of the wrong type for it)
    let structured = ["7", "\"x\"", "[1, 2]", "-1"];
    let list = ["7", "\"x\"", "{zones: 3}", "-1"];
    let cases: &[(&str, &str, &[&str])] = &[
        ("Shoot", "spec", &structured),
        ("Shoot", "status", &structured),
        ("Shoot", "spec.provider", &structured),
        ("Shoot", "spec.networking", &structured),
        ("Shoot", "spec.tolerations", &list),
        ("Seed", "spec", &structured),
        ("Seed", "status", &structured),
        ("Seed", "spec.provider", &structured),
        ("Seed", "spec.networks", &structured),
        ("Seed", "spec.taints", &list),
        ("Seed", "status.allocatable", &structured),
        ("Seed", "status.conditions", &list),
        ("CloudProfile", "spec", &structured),
        ("Project", "spec", &structured),
        ("NamespacedCloudProfile", "spec", &structured),
    ];
    for (kind, field, wrong) in cases {
        for value in wrong.iter().chain(&["null"]) {
            let nested = match field.split_once('.') {
                Some((a, b)) => format!("{a}:\n  {b}: {value}\n"),
                None => format!("{field}: {value}\n"),
            };
            let text = format!(
                "apiVersion: core.gardener.cloud/v1beta1\nkind: {kind}\nmetadata: {{name: x, namespace: y}}\n{nested}"
            );
            let mut l = Landscape::default();
            let read = l.add_text(std::path::Path::new("fuzz.yaml"), &text);
            assert!(
                read.is_ok(),
                "{kind} {field}: {value}: the file was refused: {read:?}"
            );
            let loaded = l.seeds.len()
                + l.shoots.len()
                + l.cloud_profiles.len()
                + l.projects.len()
                + l.namespaced_cloud_profiles.len();
            let skipped: Vec<&str> = l.skipped.iter().map(|s| s.message.as_str()).collect();
            if *value == "null" {
                assert_eq!(
                    (loaded, skipped.len()),
                    (1, 0),
                    "{kind} {field}: null: {skipped:?}"
                );
            } else {
                assert_eq!(loaded, 0, "{kind} {field}: {value} was loaded");
                assert!(
                    skipped.len() == 1 && skipped[0].starts_with(&format!("{kind} x: {field}")),
                    "{kind} {field}: {value}: {skipped:?}"
                );
            }
        }
    }
}

use chrono::{DateTime, Utc};
use serde_json::json;

use super::*;
use crate::chain::{ProfileChain, Selection};
use crate::compile::load_str;
use crate::config::PriorityConfig;
use crate::fixtures::{CarbonConfigMapBuilder, CloudProfileBuilder, SeedBuilder, ShootBuilder};
use crate::profile::Profile;
use crate::schedule::{Decision, schedule};
use crate::strategies::Scored;
use crate::strategies::framework::SetStep;

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

const NOW: &str = "2026-12-01T06:00:00Z";

fn tmp(name: &str, content: &str) -> String {
    let p = std::env::temp_dir().join(format!("carbon-intensity-{}-{name}", std::process::id()));
    std::fs::write(&p, content).unwrap();
    p.display().to_string()
}

fn errs(args: serde_json::Value) -> Vec<(String, String)> {
    match CarbonIntensity::from_args(&args, "p.args") {
        Ok(_) => panic!("expected errors for {args}"),
        Err(e) => e.into_iter().map(|e| (e.path, e.message)).collect(),
    }
}

#[test]
fn absent_args_give_the_documented_defaults() {
    let c = CarbonIntensity::from_args(&serde_json::Value::Null, "p.args").unwrap();
    let s = c.settings();
    assert_eq!(s.config_map_key, "data");
    assert_eq!(s.location_label, "carbon.gardener.cloud/location");
    assert_eq!(s.horizon, TimeDelta::hours(24));
    assert_eq!(s.max_staleness, None);
    assert_eq!(s.removal_grace, TimeDelta::minutes(5));
    assert_eq!(
        s.scale,
        Scale {
            best: 0.0,
            worst: 800.0
        }
    );
    assert!(s.static_table.is_empty() && s.points_file.is_none());
}

#[test]
fn every_arg_is_read() {
    let file = tmp(
        "ok.json",
        r#"[{"location":"DE","timestamp":"2026-12-01T00:00:00Z","duration":60,"value":300}]"#,
    );
    let c = CarbonIntensity::from_args(
        &json!({
            "regions": {"eu-west-1": 290.5},
            "pointsFile": file,
            "configMapKey": "forecast",
            "locationLabel": "example.com/grid",
            "regionLocations": {"eu-central-1": "DE"},
            "horizon": "12h",
            "maxStaleness": "2h",
            "removalGracePeriod": "1m",
            "scale": {"best": 50, "worst": 600}
        }),
        "p.args",
    )
    .unwrap();
    let s = c.settings();
    assert_eq!(s.static_table["eu-west-1"], 290.5);
    assert_eq!(
        s.points_file.as_ref().unwrap().1["DE"].points()[0].value,
        300.0
    );
    assert_eq!(s.config_map_key, "forecast");
    assert_eq!(s.location_label, "example.com/grid");
    assert_eq!(s.region_locations["eu-central-1"], "DE");
    assert_eq!(s.horizon, TimeDelta::hours(12));
    assert_eq!(s.max_staleness, Some(TimeDelta::hours(2)));
    assert_eq!(s.removal_grace, TimeDelta::minutes(1));
    assert_eq!(
        s.scale,
        Scale {
            best: 50.0,
            worst: 600.0
        }
    );
    let _ = std::fs::remove_file(file);
}

#[test]
fn invalid_args_are_reported_with_their_paths() {
    let cases: Vec<(serde_json::Value, &str, &str)> = vec![
        (
            json!({"region": {}}),
            "p.args.region",
            "unknown field `region`",
        ),
        (
            json!({"scale": {"min": 1}}),
            "p.args.scale.min",
            "unknown field `min`",
        ),
        (
            json!({"regions": {"a": "x"}}),
            "p.args.regions.a",
            "got text \"x\"",
        ),
        (
            json!({"regions": {"a": -1}}),
            "p.args.regions.a",
            "must be a number of gCO2eq/kWh from 0 to 100000, got -1",
        ),
        (json!({"horizon": "soon"}), "p.args.horizon", ""),
        (
            json!({"horizon": "0s"}),
            "p.args.horizon",
            "must be greater than zero",
        ),
        (
            json!({"horizon": "169h"}),
            "p.args.horizon",
            "must be at most 168h",
        ),
        (
            json!({"horizon": "8d"}),
            "p.args.horizon",
            "unknown unit \"d\" in duration \"8d\"",
        ),
        (
            json!({"horizon": "-1h"}),
            "p.args.horizon",
            "must not be negative, got \"-1h\"",
        ),
        (
            json!({"maxStaleness": "0s"}),
            "p.args.maxStaleness",
            "must be greater than zero",
        ),
        (
            json!({"removalGracePeriod": "25h"}),
            "p.args.removalGracePeriod",
            "must be at most 24h",
        ),
        (
            json!({"scale": {"best": 500, "worst": 400}}),
            "p.args.scale.worst",
            "must be greater than scale.best (400 <= 500)",
        ),
        (
            json!({"scale": {"best": -1}}),
            "p.args.scale.best",
            "must be a number of gCO2eq/kWh from 0 to 100000, got -1",
        ),
        (
            json!({"configMapKey": "a/b"}),
            "p.args.configMapKey",
            "\"a/b\" is not a valid ConfigMap key",
        ),
        (
            json!({"configMapKey": ""}),
            "p.args.configMapKey",
            "\"\" is not a valid ConfigMap key",
        ),
        (
            json!({"locationLabel": " "}),
            "p.args.locationLabel",
            "must not be empty",
        ),
        (
            json!({"regionLocations": {"eu-central-1": ""}}),
            "p.args.regionLocations.eu-central-1",
            "must not be empty",
        ),
        (
            json!({"pointsFile": ""}),
            "p.args.pointsFile",
            "must not be empty",
        ),
        (
            json!({"pointsFile": "/nonexistent/forecast.json"}),
            "p.args.pointsFile",
            "reading /nonexistent/forecast.json: ",
        ),
    ];
    for (args, path, msg) in cases {
        let e = errs(args.clone());
        assert!(
            e.iter().any(|(p, m)| p == path && m.contains(msg)),
            "{args}: want {path}: {msg}, got {e:?}"
        );
    }
}

#[test]
fn every_invalid_arg_is_reported_not_just_the_first() {
    let e = errs(json!({"horizon": "0s", "maxStaleness": "0s", "scale": {"worst": 0}}));
    assert_eq!(e.len(), 3, "{e:?}");
}

#[test]
fn a_malformed_points_file_names_the_file_and_the_point() {
    let file = tmp(
        "bad.json",
        r#"[{"location":"DE","timestamp":"2026-12-01T00:00:00Z","duration":60,"value":-5}]"#,
    );
    let e = errs(json!({"pointsFile": file}));
    assert_eq!(e[0].0, "p.args.pointsFile");
    assert_eq!(
        e[0].1,
        format!("{file}[0].value: must not be negative, got -5 gCO2eq/kWh")
    );
    let _ = std::fs::remove_file(file);
}

#[test]
fn the_config_file_keeps_the_case_of_locations_and_regions() {
    let cfg = load_str(
        r#"
schedulers:
  shoot:
    priorities:
    - name: CarbonIntensity
      args:
        regions: {DE: 350, eu-west-1: 290}
        regionLocations: {eu-central-1: DE}
"#,
    )
    .unwrap();
    let s = cfg.chain.carbon_settings().unwrap();
    assert_eq!(
        s.static_table,
        BTreeMap::from([("DE".into(), 350.0), ("eu-west-1".into(), 290.0)])
    );
    assert_eq!(s.region_locations["eu-central-1"], "DE");
}

#[test]
fn invalid_args_fail_config_loading_with_the_full_path() {
    let err = load_str(
        r#"
schedulers:
  shoot:
    priorities:
    - name: ShootCount
    - name: CarbonIntensity
      args: {horizon: 0s}
"#,
    )
    .unwrap_err()
    .to_string();
    assert!(
        err.contains("schedulers.shoot.priorities[1].args.horizon: must be greater than zero"),
        "{err}"
    );
}

#[test]
fn the_chain_declares_the_carbon_config_maps_of_a_profile_entry() {
    let cfg = load_str(
        r#"
schedulers:
  shoot:
    profiles:
    - id: eco
      profile:
        priorities: [{name: CarbonIntensity, args: {horizon: 6h}}]
    - id: default
      profile: {}
"#,
    )
    .unwrap();
    let s = cfg.chain.carbon_settings().unwrap();
    assert_eq!(s.horizon, TimeDelta::hours(6));
    assert_eq!(
        cfg.chain.cluster_data(),
        vec![crate::plugin::ClusterData::CarbonConfigMaps(s)]
    );
    let plain = load_str("").unwrap();
    assert_eq!(plain.chain.carbon_settings(), None);
    assert!(plain.chain.cluster_data().is_empty());
}

// ---- decisions

/// Two seeds equal in everything but their region (hence location).
fn snapshot(cms: &[CarbonConfigMapBuilder]) -> Snapshot {
    let mut snap = Snapshot::new();
    snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
    snap.upsert_seed(&SeedBuilder::new("seed-a").region("eu-central-1").build());
    snap.upsert_seed(&SeedBuilder::new("seed-b").region("eu-north-1").build());
    for cm in cms {
        snap.upsert_config_map(&cm.clone().build());
    }
    snap
}

fn profile(args: serde_json::Value) -> Profile {
    Profile::build(
        "carbon",
        Scored.name(),
        &[
            PriorityConfig {
                name: "ShootCount".into(),
                weight: 1.0,
                args: serde_json::Value::Null,
            },
            PriorityConfig {
                name: NAME.into(),
                weight: 1.0,
                args,
            },
        ],
        &[],
        "p",
    )
    .unwrap()
}

fn forecast(name: &str, location: &str, value: f64) -> CarbonConfigMapBuilder {
    CarbonConfigMapBuilder::new(name)
        .heartbeat("2026-12-01T05:50:00Z")
        .points(location, "2026-12-01T00:00:00Z", 5, 12 * 48, value)
}

fn decide(snap: &Snapshot, profile: &Profile, shoot: &str, now: &str) -> Decision {
    schedule(
        &ShootBuilder::new("garden-p", shoot).build(),
        snap,
        profile,
        t(now),
    )
    .unwrap()
}

fn carbon_of<'a>(d: &'a Decision, seed: &str) -> &'a crate::schedule::PriorityScore {
    d.ranking
        .iter()
        .find(|s| &*s.seed == seed)
        .unwrap()
        .priorities
        .iter()
        .find(|p| p.name == NAME)
        .unwrap()
}

#[test]
fn the_shoot_goes_to_the_seed_with_the_cleaner_forecast() {
    let p = profile(serde_json::Value::Null);
    for (a, b, want) in [(400.0, 40.0, "seed-b"), (40.0, 400.0, "seed-a")] {
        let snap = snapshot(&[
            forecast("carbon-de", "eu-central-1", a),
            forecast("carbon-se", "eu-north-1", b),
        ]);
        for i in 0..10 {
            let d = decide(&snap, &p, &format!("s{i}"), NOW);
            assert_eq!(d.seed, want, "a={a} b={b}");
        }
    }
    let snap = snapshot(&[
        forecast("carbon-de", "eu-central-1", 400.0),
        forecast("carbon-se", "eu-north-1", 40.0),
    ]);
    let d = decide(&snap, &p, "s", NOW);
    let c = carbon_of(&d, "seed-b");
    assert_eq!(c.score, 95.0);
    assert_eq!(c.raw, 40.0);
    assert_eq!(c.detail, "40 gCO2eq/kWh (mean over 24h, data age 10m)");
    assert_eq!(carbon_of(&d, "seed-a").score, 50.0);
}

#[test]
fn deleting_and_recreating_the_configmaps_with_reversed_values_flips_the_choice() {
    let p = profile(serde_json::Value::Null);
    let mut snap = snapshot(&[
        forecast("carbon-de", "eu-central-1", 400.0),
        forecast("carbon-se", "eu-north-1", 40.0),
    ]);
    assert_eq!(decide(&snap, &p, "first", NOW).seed, "seed-b");

    // The exporter's refresh: delete, a decision in between, recreate.
    snap.remove_carbon_config_map("kube-system", "carbon-de", t("2026-12-01T06:00:00Z"));
    snap.remove_carbon_config_map("kube-system", "carbon-se", t("2026-12-01T06:00:00Z"));
    let between = decide(&snap, &p, "first", "2026-12-01T06:00:03Z");
    assert_eq!(
        between.seed, "seed-b",
        "no flapping while the ConfigMaps are briefly gone"
    );
    assert_eq!(carbon_of(&between, "seed-b").score, 95.0);

    snap.upsert_config_map(&forecast("carbon-de", "eu-central-1", 40.0).build());
    snap.upsert_config_map(&forecast("carbon-se", "eu-north-1", 400.0).build());
    assert_eq!(
        decide(&snap, &p, "second", "2026-12-01T06:00:05Z").seed,
        "seed-a"
    );
}

#[test]
fn seeds_without_usable_data_stay_candidates_with_exactly_fifty() {
    let p = profile(serde_json::Value::Null);
    let snap = snapshot(&[
        forecast("carbon-de", "eu-central-1", 1000.0),
        CarbonConfigMapBuilder::new("carbon-se").raw("data", "[{\"location\":"),
    ]);
    let d = decide(&snap, &p, "s", NOW);
    assert_eq!(d.ranking.len(), 2, "carbon never filters");
    assert!(d.rejected.is_empty());
    let a = carbon_of(&d, "seed-a");
    assert_eq!(
        a.score, 0.0,
        "1000 gCO2eq/kWh is past the worst end of the scale"
    );
    let b = carbon_of(&d, "seed-b");
    assert_eq!(b.score, 50.0);
    assert!(b.raw.is_nan());
    assert_eq!(
        b.detail,
        "neutral: no forecast for location \"eu-north-1\"; ConfigMap kube-system/carbon-se serves no location: binaryData.data: not valid JSON: EOF while parsing a value at line 1 column 13",
        "the ConfigMap that never parsed is named with its field"
    );
    assert_eq!(d.seed, "seed-b", "neutral beats the dirtiest grid");
}

#[test]
fn the_static_table_alone_decides_without_an_exporter() {
    let p = profile(json!({"regions": {"eu-central-1": 380, "eu-north-1": 30}}));
    let d = decide(&snapshot(&[]), &p, "s", NOW);
    assert_eq!(d.seed, "seed-b");
    assert_eq!(
        carbon_of(&d, "seed-b").detail,
        "30 gCO2eq/kWh (static table)"
    );
}

#[test]
fn a_seed_label_overrides_the_region_mapping() {
    let p = profile(json!({
        "regions": {"DE": 380, "SE": 30},
        "regionLocations": {"eu-central-1": "DE", "eu-north-1": "SE"}
    }));
    let mut snap = snapshot(&[]);
    assert_eq!(decide(&snap, &p, "s", NOW).seed, "seed-b");
    snap.upsert_seed(
        &SeedBuilder::new("seed-a")
            .region("eu-central-1")
            .label("carbon.gardener.cloud/location", "SE")
            .build(),
    );
    snap.upsert_seed(
        &SeedBuilder::new("seed-b")
            .region("eu-north-1")
            .label("carbon.gardener.cloud/location", "DE")
            .build(),
    );
    assert_eq!(decide(&snap, &p, "s", NOW).seed, "seed-a");
}

#[test]
fn eco_mode_off_is_a_profile_entry_without_the_priority() {
    let cfg = load_str(
        r#"
schedulers:
  shoot:
    candidateDeterminationStrategy: Scored
    profiles:
    - id: eco-off
      schedule:
        between: {start: "2026-11-27T00:00:00Z", end: "2026-11-30T00:00:00Z"}
      profile:
        priorities: [{name: ShootCount, weight: 1}]
    - id: carbon-aware
      profile:
        priorities:
        - {name: ShootCount, weight: 1}
        - {name: CarbonIntensity, weight: 3, args: {regions: {eu-central-1: 380, eu-north-1: 30}}}
"#,
    )
    .unwrap();
    let chain = ProfileChain::from_config(&cfg.config.schedulers.shoot).unwrap();
    let snap = snapshot(&[]);
    let pick = |now: &str| match chain.select(t(now)) {
        Selection::Profile { entry, profile } => (entry.to_string(), profile),
        Selection::Deferred { reason, .. } => panic!("deferred: {reason}"),
    };
    let (entry, off) = pick("2026-11-28T12:00:00Z");
    assert_eq!(entry, "eco-off");
    assert!(off.priorities.iter().all(|p| p.priority.name() != NAME));
    // Without carbon the two seeds are equal: the tie-break spreads shoots over both.
    let seeds: std::collections::BTreeSet<String> = (0..20)
        .map(|i| decide(&snap, off, &format!("s{i}"), "2026-11-28T12:00:00Z").seed)
        .collect();
    assert_eq!(seeds.len(), 2);

    let (entry, on) = pick(NOW);
    assert_eq!(entry, "carbon-aware");
    for i in 0..20 {
        assert_eq!(decide(&snap, on, &format!("s{i}"), NOW).seed, "seed-b");
    }
}

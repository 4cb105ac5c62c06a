use std::collections::BTreeMap;

use super::*;
use crate::carbon::parse_points;
use crate::carbon::settings::*;
use crate::carbon::{DataStatus, StatusChanges};
use crate::fixtures::{CarbonConfigMapBuilder, SeedBuilder};
use crate::snapshot::Snapshot;

fn t(s: &str) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339(s).unwrap().to_utc()
}

const NOW: &str = "2026-12-01T06:00:00Z";

/// 48 hourly points of `value` for `location` from 2026-12-01T00:00Z, heartbeat at 05:53.
fn exporter(name: &str, location: &str, value: f64) -> CarbonConfigMapBuilder {
    CarbonConfigMapBuilder::new(name)
        .heartbeat("2026-12-01 05:53:00 +0000 UTC m=+3.1")
        .points(location, "2026-12-01T00:00:00Z", 60, 48, value)
}

fn sources(cms: &[CarbonConfigMapBuilder]) -> CarbonSources {
    let mut s = CarbonSources::default();
    for cm in cms {
        s.upsert(&cm.clone().build());
    }
    s
}

fn detail(settings: &CarbonSettings, location: &str, src: &CarbonSources, now: &str) -> String {
    settings
        .assess(location, location, src, t(now))
        .detail(location, settings.horizon)
}

#[test]
fn explanations_per_data_situation() {
    let fresh = exporter("fresh", "fresh", 212.0);
    let short = CarbonConfigMapBuilder::new("short")
        .heartbeat("2026-12-01T05:00:00Z")
        .points("short", "2026-12-01T05:00:00Z", 60, 3, 300.0);
    let old = CarbonConfigMapBuilder::new("old")
        .heartbeat("2026-11-30T00:00:00Z")
        .points("old", "2026-11-30T00:00:00Z", 5, 12, 100.0);
    let ended =
        CarbonConfigMapBuilder::new("ended").points("ended", "2026-12-01T05:00:00Z", 50, 1, 150.0);
    let later = CarbonConfigMapBuilder::new("later")
        .heartbeat("2026-12-01T05:59:00Z")
        .points("later", "2026-12-01T08:00:00Z", 60, 24, 100.0);
    let bad = exporter("bad", "bad", 1.0).raw(
        "data",
        r#"[{"location":"bad","timestamp":"2026-12-01T00:00:00Z","duration":5,"value":-1}]"#,
    );
    let src = sources(&[fresh, short, old, ended, later]);
    let mut src_bad = src.clone();
    // Served "bad" before, then turned malformed.
    src_bad.upsert(&exporter("bad", "bad", 1.0).build());
    src_bad.upsert(&bad.build());
    let s = CarbonSettings::default();
    let cases = [
        ("fresh", "212 gCO2eq/kWh (mean over 24h, data age 7m)"),
        (
            "short",
            "300 gCO2eq/kWh (current point: forecast covers 2h of 24h, data age 1h)",
        ),
        (
            "old",
            "neutral: forecast for location \"old\" is stale (last point ended 1d5h ago, data age 1d6h)",
        ),
        (
            "ended",
            "150 gCO2eq/kWh (last point: forecast ended 10m ago, data age unknown)",
        ),
        (
            "later",
            "neutral: no forecast point for location \"later\" covers now (forecast starts in 2h)",
        ),
        ("nowhere", "neutral: no forecast for location \"nowhere\""),
    ];
    for (location, want) in cases {
        assert_eq!(detail(&s, location, &src, NOW), want, "{location}");
    }
    assert_eq!(
        detail(&s, "bad", &src_bad, NOW),
        "neutral: forecast for location \"bad\" is malformed: ConfigMap kube-system/bad: binaryData.data[0].value: must not be negative, got -1 gCO2eq/kWh"
    );
}

#[test]
fn staleness_by_default_allows_two_point_durations_past_the_last_point() {
    // One 5-minute point 06:00-06:05: stale from 06:15 on.
    let src = sources(&[CarbonConfigMapBuilder::new("a").point("a", NOW, 5, 100.0)]);
    let s = CarbonSettings::default();
    let cases = [
        ("2026-12-01T06:04:59Z", Some(100.0)),
        ("2026-12-01T06:14:59Z", Some(100.0)),
        ("2026-12-01T06:15:00Z", None),
    ];
    for (now, want) in cases {
        assert_eq!(s.assess("a", "a", &src, t(now)).value(), want, "at {now}");
    }
}

#[test]
fn max_staleness_judges_the_heartbeat() {
    let s = CarbonSettings {
        max_staleness: Some(TimeDelta::hours(1)),
        ..Default::default()
    };
    let at = |hb: &str| {
        let src = sources(&[CarbonConfigMapBuilder::new("a").heartbeat(hb).points(
            "a",
            "2026-12-01T00:00:00Z",
            60,
            48,
            100.0,
        )]);
        s.assess("a", "a", &src, t(NOW))
    };
    assert_eq!(
        at("2026-12-01T05:00:00Z").value(),
        Some(100.0),
        "exactly 1h"
    );
    let stale = at("2026-12-01T04:59:59Z");
    assert!(
        matches!(stale, Assessment::Neutral(Neutral::Stale { .. })),
        "{stale:?}"
    );
    assert_eq!(
        stale.detail("a", s.horizon),
        "neutral: forecast for location \"a\" is stale (last point ends in 1d18h, data age 1h)"
    );
}

#[test]
fn max_staleness_without_a_heartbeat_counts_from_the_last_point() {
    let s = CarbonSettings {
        max_staleness: Some(TimeDelta::minutes(30)),
        ..Default::default()
    };
    let src =
        sources(&[CarbonConfigMapBuilder::new("a").point("a", "2026-12-01T05:00:00Z", 5, 1.0)]);
    assert_eq!(
        s.assess("a", "a", &src, t("2026-12-01T05:34:59Z")).value(),
        Some(1.0)
    );
    assert_eq!(
        s.assess("a", "a", &src, t("2026-12-01T05:35:00Z")).value(),
        None
    );
}

#[test]
fn a_deleted_configmap_counts_for_the_grace_period() {
    let mut src = sources(&[exporter("a", "a", 100.0)]);
    src.remove("kube-system", "a", t("2026-12-01T06:00:00Z"));
    let s = CarbonSettings::default();
    let within = s.assess("a", "a", &src, t("2026-12-01T06:05:00Z"));
    assert_eq!(within.value(), Some(100.0));
    assert_eq!(
        within.detail("a", s.horizon),
        "100 gCO2eq/kWh (mean over 24h, data age 12m, ConfigMap deleted 5m ago)"
    );
    let after = s.assess("a", "a", &src, t("2026-12-01T06:05:01Z"));
    assert_eq!(
        after,
        Assessment::Neutral(Neutral::NoForecast { unreadable: vec![] })
    );
}

#[test]
fn a_recreated_configmap_replaces_the_deleted_one_at_once() {
    let mut src = sources(&[exporter("a", "a", 100.0)]);
    src.remove("kube-system", "a", t(NOW));
    src.upsert(&exporter("a", "a", 700.0).build());
    let s = CarbonSettings::default();
    assert_eq!(s.assess("a", "a", &src, t(NOW)).value(), Some(700.0));
}

#[test]
fn an_existing_configmap_wins_over_a_deleted_one_and_newer_heartbeats_win() {
    let s = CarbonSettings::default();
    let mut src = sources(&[exporter("a-old", "a", 100.0), exporter("b-new", "a", 200.0)]);
    src.remove("kube-system", "a-old", t(NOW));
    assert_eq!(s.assess("a", "a", &src, t(NOW)).value(), Some(200.0));

    let src = sources(&[
        exporter("a", "a", 100.0),
        CarbonConfigMapBuilder::new("b")
            .heartbeat("2026-12-01T05:59:00Z")
            .points("a", "2026-12-01T00:00:00Z", 60, 48, 300.0),
    ]);
    assert_eq!(s.assess("a", "a", &src, t(NOW)).value(), Some(300.0));
}

#[test]
fn sources_are_consulted_configmap_then_file_then_static_table() {
    let file = parse_points(
        br#"[{"location":"both","timestamp":"2026-12-01T00:00:00Z","duration":1440,"value":222},
             {"location":"file","timestamp":"2026-12-01T00:00:00Z","duration":1440,"value":333}]"#,
        "f.json",
    )
    .unwrap();
    let s = CarbonSettings {
        points_file: Some(("f.json".into(), file)),
        static_table: BTreeMap::from([
            ("both".into(), 1.0),
            ("file".into(), 1.0),
            ("static".into(), 444.0),
            ("eu-west-1".into(), 555.0),
        ]),
        ..Default::default()
    };
    let src = sources(&[exporter("cm", "both", 111.0)]);
    let cases = [
        ("both", "x", Some(111.0)),
        ("file", "x", Some(333.0)),
        ("static", "x", Some(444.0)),
        ("IE", "eu-west-1", Some(555.0)),
        ("IE", "x", None),
    ];
    for (location, region, want) in cases {
        assert_eq!(
            s.assess(location, region, &src, t(NOW)).value(),
            want,
            "{location}/{region}"
        );
    }
    assert_eq!(
        s.assess("file", "x", &src, t(NOW))
            .detail("file", s.horizon),
        "333 gCO2eq/kWh (current point: forecast covers 18h of 24h, points file)"
    );
    assert_eq!(
        s.assess("IE", "eu-west-1", &src, t(NOW))
            .detail("IE", s.horizon),
        "555 gCO2eq/kWh (static table, region \"eu-west-1\")"
    );
}

#[test]
fn a_stale_configmap_is_not_replaced_by_the_static_table() {
    let s = CarbonSettings {
        static_table: BTreeMap::from([("a".into(), 1.0)]),
        ..Default::default()
    };
    let src =
        sources(&[CarbonConfigMapBuilder::new("a").point("a", "2026-11-01T00:00:00Z", 5, 9.0)]);
    assert!(matches!(
        s.assess("a", "a", &src, t(NOW)),
        Assessment::Neutral(Neutral::Stale { .. })
    ));
}

#[test]
fn a_configmap_without_the_configured_key_is_malformed_for_its_locations() {
    let s = CarbonSettings {
        config_map_key: "forecast".into(),
        ..Default::default()
    };
    let src = sources(&[exporter("a", "a", 100.0)]);
    assert_eq!(
        s.assess("a", "a", &src, t(NOW)).detail("a", s.horizon),
        "neutral: forecast for location \"a\" is malformed: ConfigMap kube-system/a: binaryData.forecast: is missing (binaryData has \"data\")"
    );
}

#[test]
fn seeds_map_to_locations_by_label_then_region_table_then_region() {
    let s = CarbonSettings {
        region_locations: BTreeMap::from([("eu-central-1".into(), "DE".into())]),
        ..Default::default()
    };
    let seed = |b: SeedBuilder| crate::snapshot::SeedInfo::from_seed(&b.build());
    let cases = [
        (
            seed(
                SeedBuilder::new("a")
                    .region("eu-central-1")
                    .label("carbon.gardener.cloud/location", "DE-50Hertz"),
            ),
            "DE-50Hertz",
        ),
        (
            seed(
                SeedBuilder::new("b")
                    .region("eu-central-1")
                    .label("carbon.gardener.cloud/location", ""),
            ),
            "DE",
        ),
        (seed(SeedBuilder::new("c").region("eu-central-1")), "DE"),
        (seed(SeedBuilder::new("d").region("eu-west-1")), "eu-west-1"),
    ];
    for (info, want) in cases {
        assert_eq!(s.location_of(&info), want, "{}", info.name);
    }
}

#[test]
fn scores_use_the_absolute_scale_and_neutral_is_exactly_fifty() {
    let s = CarbonSettings::default();
    let exp = |v: f64| Assessment::Expected {
        value: v,
        basis: Basis::Static,
        origin: Origin::StaticTable { key: "x".into() },
    };
    let cases = [
        (0.0, 100.0),
        (100.0, 87.5),
        (400.0, 50.0),
        (800.0, 0.0),
        (1200.0, 0.0),
    ];
    for (v, want) in cases {
        assert_eq!(s.score(&exp(v)), want, "{v}");
    }
    assert_eq!(
        s.score(&Assessment::Neutral(Neutral::NoForecast {
            unreadable: vec![]
        })),
        50.0
    );
    let custom = CarbonSettings {
        scale: Scale {
            best: 100.0,
            worst: 300.0,
        },
        ..Default::default()
    };
    assert_eq!(custom.score(&exp(50.0)), 100.0);
    assert_eq!(custom.score(&exp(250.0)), 25.0);
}

fn snapshot(seeds: &[(&str, &str)], cms: &[CarbonConfigMapBuilder]) -> Snapshot {
    let mut snap = Snapshot::new();
    for (name, region) in seeds {
        snap.upsert_seed(&SeedBuilder::new(name).region(region).build());
    }
    for cm in cms {
        snap.upsert_config_map(&cm.clone().build());
    }
    snap
}

#[test]
fn the_report_lists_every_location_and_seed() {
    let snap = snapshot(
        &[("s1", "clean"), ("s2", "clean"), ("s3", "nodata")],
        &[
            exporter("clean", "clean", 50.0),
            exporter("elsewhere", "elsewhere", 60.0),
            CarbonConfigMapBuilder::new("broken").raw("data", "{"),
        ],
    );
    let r = CarbonSettings::default().report(&snap, t(NOW));
    let locs: Vec<(&str, DataStatus)> = r
        .locations
        .iter()
        .map(|l| (l.location.as_str(), l.status))
        .collect();
    assert_eq!(
        locs,
        [
            ("clean", DataStatus::Usable),
            ("elsewhere", DataStatus::Usable),
            ("nodata", DataStatus::Missing)
        ]
    );
    assert_eq!(r.locations[0].age, Some(TimeDelta::minutes(7)));
    let seeds: Vec<(&str, Option<f64>)> = r
        .seeds
        .iter()
        .map(|s| (s.seed.as_str(), s.expected))
        .collect();
    assert_eq!(
        seeds,
        [("s1", Some(50.0)), ("s2", Some(50.0)), ("s3", None)]
    );
    assert_eq!(r.unattributed.len(), 1);
    assert_eq!(r.unattributed[0].config_map, "kube-system/broken");
    assert!(!DataStatus::Usable.is_stale());
    assert!(DataStatus::Missing.is_stale());
}

#[test]
fn status_changes_are_reported_once() {
    let settings = CarbonSettings::default();
    let mut changes = StatusChanges::default();
    let mut snap = snapshot(&[("s1", "a"), ("s2", "b")], &[exporter("a", "a", 50.0)]);

    let first = changes.update(&settings.report(&snap, t(NOW)));
    assert_eq!(
        first
            .iter()
            .map(|c| (c.location.as_str(), c.from, c.to))
            .collect::<Vec<_>>(),
        [("b", None, DataStatus::Missing)],
        "a usable location seen first is no change"
    );
    assert!(
        changes
            .update(&settings.report(&snap, t("2026-12-01T06:01:00Z")))
            .is_empty(),
        "a later report with only older ages is no change"
    );
    snap.upsert_config_map(&exporter("a", "a", 50.0).raw("data", "[").build());
    let broke = changes.update(&settings.report(&snap, t(NOW)));
    assert_eq!(broke.len(), 1);
    assert_eq!(broke[0].from, Some(DataStatus::Usable));
    assert_eq!(broke[0].to, DataStatus::Malformed);
    assert!(changes.update(&settings.report(&snap, t(NOW))).is_empty());
    snap.upsert_config_map(&exporter("a", "a", 50.0).raw("data", "{}").build());
    assert_eq!(
        changes.update(&settings.report(&snap, t(NOW))).len(),
        1,
        "another malformation is another change"
    );
}

#[test]
fn a_configmap_losing_its_label_is_dropped_at_once() {
    let mut snap = snapshot(&[("s1", "a")], &[exporter("a", "a", 50.0)]);
    snap.upsert_config_map(&exporter("a", "a", 50.0).unlabelled().build());
    assert!(snap.carbon_sources().is_empty());
}

#[test]
fn a_configmap_that_never_parsed_is_named_where_a_forecast_is_missing() {
    let never = CarbonConfigMapBuilder::new("never").raw("data", "[");
    let src = sources(&[exporter("fresh", "fresh", 212.0), never]);
    let s = CarbonSettings::default();
    let got = detail(&s, "IE", &src, NOW);
    assert!(
        got.starts_with("neutral: no forecast for location \"IE\"; ConfigMap kube-system/never serves no location: binaryData.data: "),
        "{got}"
    );
    assert_eq!(
        detail(&s, "fresh", &src, NOW),
        "212 gCO2eq/kWh (mean over 24h, data age 7m)",
        "a location with a forecast does not mention it"
    );
    let healthy = sources(&[exporter("fresh", "fresh", 212.0)]);
    assert_eq!(
        detail(&s, "IE", &healthy, NOW),
        "neutral: no forecast for location \"IE\""
    );
}

use super::*;
use crate::fixtures::{CloudProfileBuilder, SeedBuilder, ShootBuilder};
use crate::regions::Regions;

fn matrix(pairs: &[(&str, &str, f64)]) -> BTreeMap<String, BTreeMap<String, f64>> {
    let mut m: BTreeMap<String, BTreeMap<String, f64>> = BTreeMap::new();
    for (a, b, ms) in pairs {
        m.entry(a.to_string())
            .or_default()
            .insert(b.to_string(), *ms);
    }
    m
}

/// Scores and details for a shoot in `region` over seeds in `seed_regions`.
fn run(
    p: &LatencyDistance,
    region: &str,
    seed_regions: &[&str],
    setup: impl FnOnce(&mut Snapshot),
) -> Vec<(f64, String)> {
    let mut snap = Snapshot::new();
    snap.upsert_cloud_profile(&CloudProfileBuilder::new("aws").build());
    setup(&mut snap);
    for (i, r) in seed_regions.iter().enumerate() {
        snap.upsert_seed(&SeedBuilder::new(&format!("s{i}")).region(r).build());
    }
    let shoot = ShootBuilder::new("garden-a", "s").region(region).build();
    crate::priorities::testing::evaluate(p, &shoot, &snap)
}

fn scores(got: &[(f64, String)]) -> Vec<f64> {
    crate::priorities::testing::rounded(got)
}

fn region_cm(profiles: &str, rows: &[(&str, &str)]) -> crate::api::ConfigMap {
    let mut cm = crate::api::ConfigMap::default();
    cm.metadata.name = Some("regions".into());
    cm.metadata.namespace = Some("garden".into());
    cm.metadata.labels = Some(BTreeMap::from([(
        "scheduling.gardener.cloud/purpose".to_string(),
        "region-config".to_string(),
    )]));
    cm.metadata.annotations = Some(BTreeMap::from([(
        "scheduling.gardener.cloud/cloudprofiles".to_string(),
        profiles.to_string(),
    )]));
    cm.data = Some(
        rows.iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect(),
    );
    cm
}

#[test]
fn latency_is_scored_on_an_absolute_scale_from_zero_to_max_latency() {
    let m = matrix(&[("a", "b", 150.0), ("a", "c", 300.0), ("a", "d", 450.0)]);
    let got = run(
        &LatencyDistance::with_matrix(&m, false),
        "a",
        &["a", "b", "c", "d"],
        |_| {},
    );
    assert_eq!(scores(&got), vec![100.0, 50.0, 0.0, 0.0]);
    assert_eq!(got[0].1, "0 ms, same region");
    assert_eq!(got[1].1, "150 ms, measured (latency matrix)");
}

#[test]
fn seeds_at_equal_latency_score_equally_and_not_all_100() {
    let m = matrix(&[("a", "b", 60.0), ("a", "c", 60.0)]);
    let got = run(
        &LatencyDistance::with_matrix(&m, false),
        "a",
        &["b", "c"],
        |_| {},
    );
    assert_eq!(scores(&got), vec![80.0, 80.0]);
}

#[test]
fn a_single_seed_keeps_its_absolute_score() {
    let m = matrix(&[("a", "b", 30.0)]);
    let got = run(
        &LatencyDistance::with_matrix(&m, false),
        "a",
        &["b"],
        |_| {},
    );
    assert_eq!(scores(&got), vec![90.0]);
}

#[test]
fn reverse_and_path_latencies_are_named_in_the_detail() {
    let m = matrix(&[("b", "a", 20.0), ("b", "c", 40.0)]);
    let got = run(
        &LatencyDistance::with_matrix(&m, false),
        "a",
        &["b", "c"],
        |_| {},
    );
    assert_eq!(got[0].1, "20 ms, measured in reverse (latency matrix)");
    assert_eq!(got[1].1, "60 ms, derived by path via b (latency matrix)");
    assert_eq!(scores(&got), vec![93.333, 80.0]);
}

#[test]
fn a_region_missing_from_every_source_falls_back_to_region_name_distance() {
    // ca-central-1 vs ap-south-1 by name: 2 × levenshtein("ca-:-1", "ap-:-1") + 2 = 6 -> 60 ms.
    let m = matrix(&[("ca-central-1", "us-east-1", 15.0)]);
    let got = run(
        &LatencyDistance::with_matrix(&m, false),
        "ca-central-1",
        &["ap-south-1", "us-east-1"],
        |s| s.set_regions(Regions::empty()),
    );
    assert_eq!(
        got[0].1,
        "60 ms, fallback: region-name distance 6 × 10 ms (no latency known for ca-central-1 → ap-south-1)"
    );
    assert_eq!(scores(&got), vec![80.0, 95.0]);
}

#[test]
fn no_matrix_and_no_configmap_falls_back_for_every_seed() {
    let p = LatencyDistance::with_matrix(&BTreeMap::new(), true);
    let got = run(&p, "eu-west-1", &["eu-west-1", "eu-west-2"], |s| {
        s.set_regions(Regions::empty())
    });
    // eu-west-1 vs eu-west-2 by name: 2 -> 20 ms.
    assert_eq!(scores(&got), vec![100.0, 93.333]);
    assert_eq!(got[0].1, "0 ms, same region");
    assert!(got[1].1.starts_with("20 ms, fallback"), "{}", got[1].1);
}

#[test]
fn the_matrix_comes_first_then_the_region_configmap_read_as_milliseconds() {
    let m = matrix(&[("a", "b", 50.0)]);
    let cm = region_cm("aws", &[("a", "b: 10\nc: 30\n")]);
    let got = run(
        &LatencyDistance::with_matrix(&m, true),
        "a",
        &["b", "c"],
        |s| s.upsert_config_map(&cm),
    );
    assert_eq!(got[0].1, "50 ms, measured (latency matrix)");
    assert_eq!(
        got[1].1,
        "30 ms, measured (region ConfigMap garden/regions)"
    );
    let off = run(&LatencyDistance::with_matrix(&m, false), "a", &["c"], |s| {
        s.upsert_config_map(&cm)
    });
    assert!(off[0].1.contains("fallback"), "{}", off[0].1);
}

#[test]
fn configmap_latencies_are_completed_when_the_configmap_changes() {
    let p = LatencyDistance::with_matrix(&BTreeMap::new(), true);
    let cm = region_cm("aws", &[("a", "b: 10\n"), ("b", "c: 15\n")]);
    let got = run(&p, "a", &["c"], |s| s.upsert_config_map(&cm));
    assert_eq!(
        got[0].1,
        "25 ms, derived by path via b (region ConfigMap garden/regions)"
    );
    let got = run(&p, "a", &["c"], |s| {
        s.upsert_config_map(&cm);
        s.remove_config_map("garden", "regions");
    });
    assert!(
        got[0].1.contains("fallback"),
        "removed ConfigMap no longer answers: {}",
        got[0].1
    );
}

#[test]
fn a_malformed_configmap_row_is_ignored_and_said_so() {
    let p = LatencyDistance::with_matrix(&BTreeMap::new(), true);
    let cm = region_cm("aws", &[("a", "b: near\n"), ("c", "b: 10\n")]);
    let got = run(&p, "a", &["b"], |s| s.upsert_config_map(&cm));
    assert!(
        got[0].1.contains("fallback")
            && got[0]
                .1
                .contains("data[a] of region ConfigMap garden/regions ignored"),
        "{}",
        got[0].1
    );
}

fn errors(args: serde_json::Value) -> Vec<String> {
    match build(&args, "p.args") {
        Ok(_) => Vec::new(),
        Err(e) => e.iter().map(ToString::to_string).collect(),
    }
}

#[test]
fn every_bad_matrix_entry_is_reported_with_its_path() {
    let got = errors(serde_json::json!({"matrix": {
        "eu-west-1": {"us-east-1": -5, "eu-central-1": "far", "ap-south-1": 100},
        "us-east-1": 7,
    }}));
    assert_eq!(
        got,
        vec![
            "p.args.matrix.eu-west-1.eu-central-1: latency must be a number of ms, got \"far\"",
            "p.args.matrix.eu-west-1.us-east-1: latency must not be negative, got -5",
            "p.args.matrix.us-east-1: must be a mapping of region to latency in ms",
        ]
    );
    // Each finite, but a path through both would sum to infinity.
    let got = errors(serde_json::json!({"matrix": {
        "eu-west-1": {"us-east-1": 1e308},
        "us-east-1": {"ap-south-1": 1e308},
    }}));
    assert_eq!(
        got,
        vec![
            "p.args.matrix.eu-west-1.us-east-1: latency must be at most 1000000 ms, got 1e+308",
            "p.args.matrix.us-east-1.ap-south-1: latency must be at most 1000000 ms, got 1e+308",
        ]
    );
}

#[test]
fn bad_scalar_args_and_unknown_keys_are_errors() {
    assert_eq!(
        errors(serde_json::json!({"maxLatencyMs": 0, "fallbackFactor": -1})),
        vec![
            "p.args.maxLatencyMs: must be a positive number of at most 1000000, got 0",
            "p.args.fallbackFactor: must be a number from 0 to 1000, got -1",
        ]
    );
    let got = errors(serde_json::json!({"maxLatency": 10}));
    assert!(
        got[0].starts_with("p.args.maxLatency: unknown field"),
        "{got:?}"
    );
    let got = errors(serde_json::json!({"matrix": {}, "matrixFile": "x.yaml"}));
    assert_eq!(
        got,
        vec!["p.args.matrixFile: set either matrix or matrixFile, not both"]
    );
}

#[test]
fn an_unreadable_matrix_file_is_an_error_naming_the_file() {
    let got = errors(serde_json::json!({"matrixFile": "/nonexistent/latency.yaml"}));
    assert_eq!(got.len(), 1);
    assert!(
        got[0].starts_with("p.args.matrixFile: reading /nonexistent/latency.yaml:"),
        "{got:?}"
    );
}

#[test]
fn matrix_file_entries_are_checked_like_inline_ones() {
    let dir = std::env::temp_dir().join(format!("latency-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("m.yaml");
    std::fs::write(&file, "a:\n  b: 10\n  c: -1\n").unwrap();
    let got = errors(serde_json::json!({"matrixFile": file.display().to_string()}));
    assert_eq!(
        got,
        vec![format!(
            "p.args.matrixFile: {}: a.c: latency must not be negative, got -1",
            file.display()
        )]
    );
    std::fs::write(&file, "a:\n  b: 10\n").unwrap();
    assert!(errors(serde_json::json!({"matrixFile": file.display().to_string()})).is_empty());
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn config_errors_name_the_full_field_path() {
    let yaml = r#"
schedulers:
  shoot:
    candidateDeterminationStrategy: Scored
    priorities:
    - name: ShootCount
    - name: LatencyDistance
      args:
        matrix:
          eu-west-1: {us-east-1: -5, westEurope: 7}
"#;
    let err = crate::compile::load_str(yaml).unwrap_err().to_string();
    assert!(
            err.contains("schedulers.shoot.priorities[1].args.matrix.eu-west-1.us-east-1: latency must not be negative, got -5"),
            "{err}"
        );
    assert!(!err.contains("westEurope"), "{err}");
}

#[test]
fn the_example_latency_matrix_is_valid() {
    let file = concat!(env!("CARGO_MANIFEST_DIR"), "/example/latency-matrix.yaml");
    assert!(errors(serde_json::json!({"matrixFile": file})).is_empty());
}

//! Carbon-aware placement as a user meets it: `simulate` with the example carbon config.
//!
//! The golden file is rewritten with `UPDATE_GOLDEN=1 cargo test --test carbon_cli`.

use std::path::Path;

#[path = "support/cli.rs"]
mod cli_support;
use cli_support::{assert_has, base64, bin, tmp};

const CONFIG: &str = "example/22-componentconfig-carbon.yaml";
const TWO_SEEDS: &str = "example/carbon-two-seeds.yaml";
/// Inside the example forecast (2026-12-01T00:00Z..2026-12-02T12:00Z) with 24h ahead.
const NOW: &str = "2026-12-01T06:00:00Z";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn run(args: &[&str]) -> (i32, String, String) {
    cli_support::run(bin().args(args))
}

fn explain(config: &str, manifests: &str, now: &str) -> String {
    let (code, out, err) = run(&[
        "simulate",
        "--config",
        config,
        "-f",
        manifests,
        "--now",
        now,
        "--explain",
        "garden-dev/web",
    ]);
    assert_eq!(code, 0, "{err}");
    out
}

fn two_seeds() -> String {
    std::fs::read_to_string(root().join(TWO_SEEDS)).unwrap()
}

#[test]
fn the_cleaner_seed_wins_between_two_otherwise_equal_seeds() {
    let out = explain(CONFIG, TWO_SEEDS, NOW);
    let golden = root().join("tests/golden/carbon-two-seeds.explain.txt");
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::write(&golden, &out).unwrap();
    }
    let want = std::fs::read_to_string(&golden).expect("golden file exists");
    assert_eq!(
        out, want,
        "simulate --explain output differs from {golden:?}"
    );
    // What the golden file must say, independently of how it was produced.
    assert_has(
        &out,
        &["Scheduled to seed \"seed-2\" by profile \"carbon-aware\""],
    );
    assert_has(&out, &["gCO2eq/kWh (mean over 24h, points file)"]);
}

#[test]
fn swapping_the_seeds_regions_swaps_the_choice() {
    let swapped = two_seeds()
        .replace("name: seed-1", "name: seed-x")
        .replace("name: seed-2", "name: seed-1")
        .replace("name: seed-x", "name: seed-2");
    let f = tmp("swapped.yaml", &swapped);
    let out = explain(CONFIG, f.to_str().unwrap(), NOW);
    assert!(out.contains("Scheduled to seed \"seed-1\""), "{out}");
}

#[test]
fn an_exporter_configmap_in_the_manifests_decides_before_the_points_file() {
    // Reversed grids: the exporter says Germany is clean and Sweden is not.
    let mut points = Vec::new();
    for (location, value) in [("DE", 40), ("SE", 700)] {
        for h in 0..36 {
            points.push(format!(
                r#"{{"location":"{location}","timestamp":"2026-12-{:02}T{:02}:00:00Z","duration":60,"value":{value}}}"#,
                1 + h / 24,
                h % 24
            ));
        }
    }
    let payload = format!("[{}]", points.join(","));
    let cm = format!(
        r#"---
apiVersion: v1
kind: ConfigMap
metadata:
  name: carbon-intensity
  namespace: kube-system
  labels:
    scheduling.gardener.cloud/purpose: carbon-intensity
immutable: true
data:
  lastHeartbeatTime: 2026-12-01 05:53:00.041158869 +0000 UTC m=+10.861427049
  message: ""
  numOfRecords: "72"
binaryData:
  data: {}
"#,
        base64(payload.as_bytes())
    );
    let f = tmp("with-exporter.yaml", &format!("{}{cm}", two_seeds()));
    let out = explain(CONFIG, f.to_str().unwrap(), NOW);
    assert!(out.contains("Scheduled to seed \"seed-1\""), "{out}");
    assert_has(&out, &["40 gCO2eq/kWh (mean over 24h, data age 7m)"]);
}

fn exporter_config_map(heartbeat: &str, payload: &[u8]) -> String {
    format!(
        r#"---
apiVersion: v1
kind: ConfigMap
metadata:
  name: carbon-se
  namespace: kube-system
  labels:
    scheduling.gardener.cloud/purpose: carbon-intensity
data:
  lastHeartbeatTime: "{heartbeat}"
binaryData:
  data: {}
"#,
        base64(payload)
    )
}

#[test]
fn a_configmap_with_a_bad_heartbeat_scores_neutral_naming_the_field() {
    let cm = exporter_config_map(
        "soon",
        br#"[{"location":"SE","timestamp":"2026-12-01T00:00:00Z","duration":2880,"value":5}]"#,
    );
    let f = tmp("bad-heartbeat.yaml", &format!("{}{cm}", two_seeds()));
    let out = explain(CONFIG, f.to_str().unwrap(), NOW);
    let line = out
        .lines()
        .find(|l| l.contains("location \"SE\""))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(line.contains(" 50.00 × 1 "), "{line}");
    assert!(
        line.ends_with(
            "neutral: forecast for location \"SE\" is malformed: ConfigMap kube-system/carbon-se: data.lastHeartbeatTime: \"soon\" is not a timestamp (RFC 3339 or Go's time format)"
        ),
        "{line}"
    );
    // Neutral, not worst: the seed on the points file's 364 gCO2eq/kWh (score 54.6) now wins.
    assert!(out.contains("Scheduled to seed \"seed-1\""), "{out}");
}

#[test]
fn malformed_forecast_json_never_stops_simulate() {
    for (name, payload) in [
        (
            "negative",
            &br#"[{"location":"SE","timestamp":"2026-12-01T00:00:00Z","duration":60,"value":-1}]"#
                [..],
        ),
        ("truncated", &br#"[{"location":"SE","timest"#[..]),
        ("not-utf8", &[0xff, 0xfe, 0x00][..]),
    ] {
        let cm = exporter_config_map("2026-12-01T05:00:00Z", payload);
        let f = tmp(&format!("{name}.yaml"), &format!("{}{cm}", two_seeds()));
        let out = explain(CONFIG, f.to_str().unwrap(), NOW);
        // A ConfigMap that never parsed serves no known location: the points file decides.
        assert!(
            out.contains("Scheduled to seed \"seed-2\""),
            "{name}: {out}"
        );
    }
}

#[test]
fn eco_mode_off_window_places_without_carbon() {
    let out = explain(CONFIG, TWO_SEEDS, "2026-11-28T12:00:00Z");
    assert!(out.contains("by profile \"eco-off\""), "{out}");
    assert!(!out.contains("CarbonIntensity"), "{out}");
}

#[test]
fn outside_the_forecast_every_seed_scores_neutral() {
    let out = explain(CONFIG, TWO_SEEDS, "2026-12-10T00:00:00Z");
    for location in ["DE", "SE"] {
        let line = out
            .lines()
            .find(|l| l.contains(&format!("location \"{location}\"")))
            .unwrap_or_else(|| panic!("{out}"));
        assert!(line.contains(" 50.00 × 1 "), "{line}");
        assert_has(line, &["is stale (last point ended 7d12h ago)"]);
    }
}

#[test]
fn a_malformed_points_file_fails_config_loading_naming_the_path() {
    let points = tmp(
        "bad-points.json",
        r#"[{"location":"SE","timestamp":"2026-12-01T00:00:00Z","duration":60,"value":"low"}]"#,
    );
    let config = std::fs::read_to_string(root().join(CONFIG))
        .unwrap()
        .replace("example/carbon-forecast.json", points.to_str().unwrap());
    let cfg = tmp("bad-config.yaml", &config);
    let (code, _, err) = run(&[
        "simulate",
        "--config",
        cfg.to_str().unwrap(),
        "-f",
        TWO_SEEDS,
    ]);
    assert_eq!(code, 2, "{err}");
    let want = format!(
        "schedulers.shoot.profiles[1].profile.priorities[1].args.pointsFile: {}[0].value: must be a number, got \"low\"",
        points.display()
    );
    assert!(err.contains(&want), "{err}\nwant: {want}");
}

#[test]
fn the_example_forecast_covers_every_seed_of_the_example_landscape() {
    use gardener_scheduler::carbon::DataStatus;
    use gardener_scheduler::simulate::{Landscape, snapshot_of};

    let text = std::fs::read_to_string(root().join(CONFIG)).unwrap();
    let cfg = gardener_scheduler::compile::load_str(&text).unwrap();
    let settings = cfg
        .chain
        .carbon_settings()
        .expect("the example config uses CarbonIntensity");
    let landscape = Landscape::load(&[root().join("example/landscape")]).unwrap();
    let now = chrono::DateTime::parse_from_rfc3339(NOW).unwrap().to_utc();
    let report = settings.report(&snapshot_of(&landscape), now);
    assert_eq!(report.seeds.len(), landscape.seeds.len());
    for s in &report.seeds {
        assert!(s.expected.is_some(), "{}: {}", s.seed, s.detail);
        assert!(
            s.detail.contains("(mean over 24h, points file)"),
            "{}: {}",
            s.seed,
            s.detail
        );
    }
    assert!(
        report
            .locations
            .iter()
            .all(|l| l.status == DataStatus::Usable)
    );
    // The landscape spans grids from clean to dirty.
    let values: Vec<f64> = report.seeds.iter().filter_map(|s| s.expected).collect();
    let (lo, hi) = values
        .iter()
        .fold((f64::MAX, f64::MIN), |(lo, hi), v| (lo.min(*v), hi.max(*v)));
    assert!(lo < 100.0 && hi > 500.0, "{lo}..{hi}");
}

#[test]
fn the_documented_example_output_is_the_real_one() {
    let doc = std::fs::read_to_string(root().join("docs/concepts/carbon.md")).unwrap();
    let out = explain(CONFIG, TWO_SEEDS, NOW);
    assert!(
        doc.contains(out.trim_end()),
        "docs/concepts/carbon.md shows other output than:\n{out}"
    );
}

#[test]
fn the_documented_configurations_load() {
    let doc = std::fs::read_to_string(root().join("docs/concepts/carbon.md")).unwrap();
    let blocks: Vec<&str> = doc
        .split("```yaml\n")
        .skip(1)
        .filter_map(|b| b.split("```").next())
        .filter(|b| b.starts_with("schedulers:"))
        .collect();
    assert_eq!(
        blocks.len(),
        2,
        "the args example and the eco-mode-off recipe"
    );
    for b in blocks {
        gardener_scheduler::compile::load_str(b).unwrap_or_else(|e| panic!("{e}\n{b}"));
    }
}

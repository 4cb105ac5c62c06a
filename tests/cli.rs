//! The command line as a user meets it: exit codes, error messages, output formats.

use std::path::PathBuf;
use std::process::{Command, Output};

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_gardener-scheduler"));
    c.current_dir(env!("CARGO_MANIFEST_DIR"));
    c.env_remove("KUBECONFIG");
    c
}

fn run(c: &mut Command) -> (i32, String, String) {
    let Output {
        status,
        stdout,
        stderr,
    } = c.output().expect("binary runs");
    (
        status.code().unwrap_or(-1),
        String::from_utf8_lossy(&stdout).into_owned(),
        String::from_utf8_lossy(&stderr).into_owned(),
    )
}

fn tmp(name: &str, content: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).unwrap();
    let p = dir.join(name);
    std::fs::write(&p, content).unwrap();
    p
}

const SEED: &str = r#"
apiVersion: core.gardener.cloud/v1beta1
kind: Seed
metadata: {name: s1}
spec:
  provider: {type: aws, region: eu-west-1, zones: [a, b, c]}
status:
  lastOperation: {type: Reconcile, state: Succeeded}
  conditions: [{type: GardenletReady, status: "True"}]
---
apiVersion: core.gardener.cloud/v1beta1
kind: CloudProfile
metadata: {name: aws}
spec: {type: aws}
"#;

const SHOOT: &str = r#"
apiVersion: core.gardener.cloud/v1beta1
kind: Shoot
metadata: {name: web, namespace: garden-dev, creationTimestamp: "2026-11-01T00:00:00Z"}
spec:
  cloudProfile: {name: aws}
  region: eu-west-1
  provider: {type: aws, workers: [{name: w}]}
  kubernetes: {version: "1.33.0"}
"#;

#[test]
fn simulate_places_a_pending_shoot_and_prints_a_table() {
    let f = tmp("ok.yaml", &format!("{SEED}---{SHOOT}"));
    let (code, out, err) = run(bin().args(["simulate", "-f"]).arg(&f));
    assert_eq!(code, 0, "{err}");
    let row = out
        .lines()
        .find(|l| l.starts_with("garden-dev/web"))
        .expect(&out);
    assert!(row.contains(" s1 "), "{row}");
    assert!(out.contains("1/1 pending shoots scheduled"), "{out}");
}

#[test]
fn simulate_yaml_output_is_the_input_shoot_with_seed_name_filled_in() {
    let f = tmp("yaml.yaml", &format!("{SEED}---{SHOOT}"));
    let (code, out, err) = run(bin().args(["simulate", "-o", "yaml", "-f"]).arg(&f));
    assert_eq!(code, 0, "{err}");
    let doc: serde_yaml_ng::Value = serde_yaml_ng::from_str(&out).expect(&out);
    assert_eq!(doc["spec"]["seedName"].as_str(), Some("s1"), "{out}");
    assert_eq!(
        doc["spec"]["kubernetes"]["version"].as_str(),
        Some("1.33.0"),
        "unknown fields survive: {out}"
    );
}

#[test]
fn simulate_json_has_the_documented_shape() {
    let f = tmp("json.yaml", &format!("{SEED}---{SHOOT}"));
    let (code, out, err) = run(bin().args(["simulate", "-o", "json", "-f"]).arg(&f));
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let d = &v["decisions"][0];
    assert_eq!(d["shoot"], "garden-dev/web");
    assert_eq!(d["seed"], "s1");
    assert!(d["error"].is_null());
    assert_eq!(d["scores"]["s1"]["total"], 100.0);
    assert_eq!(d["scores"]["s1"]["priorities"]["ShootCount"], 100.0);
    let keys: Vec<&String> = d.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["error", "scores", "seed", "shoot"]);
}

#[test]
fn unschedulable_shoot_exits_zero_with_reason() {
    let f = tmp(
        "nofit.yaml",
        &format!("{SEED}---{}", SHOOT.replace("eu-west-1", "us-east-1")),
    );
    let (code, out, _) = run(bin().args(["simulate", "-o", "json", "-f"]).arg(&f));
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert!(v["decisions"][0]["seed"].is_null());
    assert_eq!(
        v["decisions"][0]["error"],
        "0/1 seeds are available: 1 seed(s) are in another region."
    );
}

#[test]
fn malformed_document_names_file_and_document_index() {
    let f = tmp(
        "bad.yaml",
        &format!(
            "{SEED}---\napiVersion: core.gardener.cloud/v1beta1\nkind: Seed\nmetadata: {{name: s2}}\nspec:\n  taints: 7\n---{SHOOT}"
        ),
    );
    let (code, _, err) = run(bin().args(["simulate", "--strict", "-f"]).arg(&f));
    assert_eq!(code, 2);
    assert!(
        err.contains("bad.yaml: document 2: Seed s2: spec.taints"),
        "{err}"
    );
    // Without --strict the object is skipped, reported, and the rest is scheduled.
    let (code, out, err) = run(bin().args(["simulate", "-f"]).arg(&f));
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning: skipped ")
            && err.contains("bad.yaml: document 2: Seed s2: spec.taints"),
        "{err}"
    );
    assert!(out.contains("1/1 pending shoots scheduled"), "{out}");
    assert!(
        out.contains("1 object(s) skipped") && out.contains("document 2: Seed s2: spec.taints"),
        "{out}"
    );
}

#[test]
fn unsupported_kind_is_an_error() {
    let f = tmp(
        "kind.yaml",
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: x}\n",
    );
    let (code, _, err) = run(bin().args(["simulate", "--strict", "-f"]).arg(&f));
    assert_eq!(code, 2);
    assert!(
        err.contains("document 0: Deployment x: unsupported object apps/v1/Deployment"),
        "{err}"
    );
    let (code, _, err) = run(bin().args(["simulate", "-f"]).arg(&f));
    assert_eq!(code, 0);
    assert!(err.contains("warning: skipped "), "{err}");
}

#[test]
fn shoot_with_missing_fields_fails_alone_with_the_field_named() {
    let broken = "apiVersion: core.gardener.cloud/v1beta1\nkind: Shoot\nmetadata: {name: broken, namespace: garden-dev}\nspec:\n  cloudProfile: {name: aws}\n  provider: {type: aws}\n";
    let f = tmp("partial.yaml", &format!("{SEED}---{SHOOT}---\n{broken}"));
    let (code, out, _) = run(bin().args(["simulate", "-f"]).arg(&f));
    assert_eq!(code, 0);
    assert!(
        out.lines().any(|l| l.starts_with("garden-dev/broken")
            && l.contains("invalid shoot: spec.region: is required")),
        "{out}"
    );
    assert!(
        out.lines()
            .any(|l| l.starts_with("garden-dev/web") && l.contains(" s1 ")),
        "{out}"
    );
}

#[test]
fn explain_lists_every_seed_with_its_stage() {
    let second = SEED
        .replace("name: s1", "name: s2")
        .replace("eu-west-1", "us-east-1");
    let f = tmp("explain.yaml", &format!("{SEED}---{second}---{SHOOT}"));
    let (code, out, err) = run(bin()
        .args(["simulate", "--explain", "garden-dev/web", "-f"])
        .arg(&f));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Scheduled to seed \"s1\""), "{out}");
    assert!(
        out.lines()
            .any(|l| l.contains("s2") && l.contains("SameRegion") && l.contains("us-east-1")),
        "{out}"
    );
}

#[test]
fn invalid_config_exits_2_listing_every_error() {
    let cfg = tmp(
        "bad-config.yaml",
        "schedulers:\n  shoot:\n    concurrentSyncs: 0\n    candidateDeterminationStrategy: Foo\n",
    );
    let (code, _, err) = run(bin().args(["--validate-only", "--config"]).arg(&cfg));
    assert_eq!(code, 2);
    assert!(
        err.contains("schedulers.shoot.concurrentSyncs: must be between 1 and 1000, got 0"),
        "{err}"
    );
    assert!(
        err.contains("schedulers.shoot.candidateDeterminationStrategy: unsupported value \"Foo\""),
        "{err}"
    );
}

#[test]
fn environment_overrides_the_file_and_kubeconfig_env_wins() {
    let cfg = tmp(
        "env-config.yaml",
        "schedulers:\n  shoot:\n    concurrentSyncs: 3\nclientConnection:\n  kubeconfig: /from/file\n",
    );
    let (code, out, err) = run(bin()
        .args(["run", "--validate-only", "--config"])
        .arg(&cfg)
        .env(
            "GARDENER_SCHEDULER_SCHEDULERS__SHOOT__CONCURRENT_SYNCS",
            "9",
        )
        .env("GARDENER_SCHEDULER_LOG_LEVEL", "debug")
        .env("KUBECONFIG", "/from/env"));
    assert_eq!(code, 0, "{err}");
    let v: serde_yaml_ng::Value = serde_yaml_ng::from_str(&out).unwrap();
    assert_eq!(
        v["schedulers"]["shoot"]["concurrentSyncs"].as_i64(),
        Some(9),
        "{out}"
    );
    assert_eq!(v["logLevel"].as_str(), Some("debug"), "{out}");
    assert_eq!(
        v["clientConnection"]["kubeconfig"].as_str(),
        Some("/from/env"),
        "{out}"
    );
}

#[test]
fn kubeconfig_flag_beats_the_environment() {
    let (code, out, err) = run(bin()
        .args(["--validate-only", "--kubeconfig", "/from/flag"])
        .env("KUBECONFIG", "/from/env"));
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("kubeconfig: /from/flag"), "{out}");
}

#[test]
fn timeline_prints_one_line_per_active_entry_change() {
    let (code, out, err) = run(bin().args([
        "simulate",
        "--config",
        "example/21-componentconfig-profiles.yaml",
        "-f",
        "example/landscape",
        "--timeline",
        "2026-12-04T00:00:00Z..2026-12-14T00:00:00Z",
    ]));
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines,
        [
            "2026-12-04T00:00:00Z  default",
            "2026-12-04T18:00:00Z  release-weekend (freeze)",
            "2026-12-07T06:00:00Z  default",
            "2026-12-12T21:00:00Z  saturday-maintenance",
            "2026-12-13T03:00:00Z  default",
        ],
        "{out}"
    );
}

#[test]
fn simulate_inside_a_freeze_defers_every_shoot_without_failing() {
    let (code, out, err) = run(bin().args([
        "simulate",
        "--config",
        "example/21-componentconfig-profiles.yaml",
        "-f",
        "example/landscape",
        "--now",
        "2026-12-05T12:00:00Z",
    ]));
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("freeze window \"release-weekend\" until 2026-12-07T06:00:00Z"),
        "{out}"
    );
}

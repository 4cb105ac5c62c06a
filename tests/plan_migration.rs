//! Plans mark each move live or classic with the reasons, never plan a seed change
//! gardener-apiserver would refuse, prefer live destinations when asked, write the live-migration
//! annotation exactly on the live moves, and are stamped with what they were computed from.

use serde_json::Value;

#[path = "support/cli.rs"]
mod cli_support;
use cli_support::{AWS_CLOUD_PROFILE as CLOUD_PROFILE, bin, elements, run, tmp};

const NOW: &str = "2026-12-01T12:00:00Z";

/// A ready seed with backup, the gardenlet `version` and the internal domain `internal`.
fn seed(name: &str, region: &str, version: &str, internal: &str) -> String {
    format!(
        r#"
apiVersion: core.gardener.cloud/v1beta1
kind: Seed
metadata: {{name: {name}}}
spec:
  provider: {{type: aws, region: {region}, zones: [a, b, c]}}
  backup: {{provider: aws, region: {region}}}
  dns: {{internal: {{domain: {internal}}}}}
status:
  lastOperation: {{type: Reconcile, state: Succeeded}}
  conditions: [{{type: GardenletReady, status: "True"}}, {{type: BackupBucketsReady, status: "True"}}]
  allocatable: {{shoots: "10"}}
  gardener: {{version: {version}}}
---"#
    )
}

/// A shoot on `on`, highly available when `ha`.
fn shoot(name: &str, on: &str, ha: bool) -> String {
    let ha = if ha {
        "\n  controlPlane: {highAvailability: {failureTolerance: {type: node}}}"
    } else {
        ""
    };
    format!(
        r#"
apiVersion: core.gardener.cloud/v1beta1
kind: Shoot
metadata: {{name: {name}, namespace: garden-dev, resourceVersion: "7"}}
spec:
  seedName: {on}
  cloudProfile: {{name: aws}}
  region: eu-west-1
  provider: {{type: aws, workers: [{{name: w}}]}}
  kubernetes: {{version: "1.33.0"}}
  maintenance: {{timeWindow: {{begin: "220000+0000", end: "230000+0000"}}}}{ha}
---"#
    )
}

/// `plan drain old` of `file` in `output` with `extra` flags: stdout (exit status 0).
fn drain(file: &std::path::Path, output: &str, extra: &[&str]) -> String {
    let mut args = vec![
        "plan",
        "drain",
        "old",
        "-f",
        file.to_str().unwrap(),
        "--now",
        NOW,
        "-o",
        output,
    ];
    args.extend_from_slice(extra);
    let (code, out, err) = run(bin().args(&args));
    assert_eq!(code, 0, "{err}");
    out
}

fn plan_json(file: &std::path::Path, extra: &[&str]) -> Value {
    serde_json::from_str(&drain(file, "json", extra)).unwrap()
}

fn move_of<'a>(plan: &'a Value, shoot: &str) -> &'a Value {
    elements(plan, "moves")
        .find(|m| m["shoot"] == shoot)
        .unwrap_or_else(|| panic!("no move of {shoot}: {plan:#}"))
}

#[test]
fn an_ha_shoot_moves_live_only_with_the_feature_gate_and_the_prerequisites() {
    let file = tmp(
        "live.yaml",
        &format!(
            "{}{}{}{}{CLOUD_PROFILE}",
            seed("old", "eu-west-1", "v1.130.0", "int.example.com"),
            seed("new", "eu-west-1", "v1.130.0", "int.example.com"),
            shoot("ha", "old", true),
            shoot("single", "old", false),
        ),
    );
    let plan = plan_json(&file, &["--live-migration"]);
    assert_eq!(move_of(&plan, "garden-dev/ha")["migration"]["kind"], "live");
    let single = move_of(&plan, "garden-dev/single");
    assert_eq!(single["migration"]["kind"], "classic");
    assert_eq!(
        single["migration"]["notLive"],
        serde_json::json!(["the control plane is not highly available"])
    );
    // without the gate every move is classic, and says so
    let plan = plan_json(&file, &[]);
    let ha = move_of(&plan, "garden-dev/ha");
    assert_eq!(ha["migration"]["kind"], "classic");
    assert!(
        ha["migration"]["notLive"][0]
            .as_str()
            .unwrap()
            .contains("--live-migration"),
        "{ha:#}"
    );
    // the table counts them
    let out = drain(&file, "table", &["--live-migration"]);
    assert!(out.contains("MIGRATION"), "{out}");
    assert!(
        out.contains(
            "Migrations: 1 live, 1 classic; not live: 1× the control plane is not highly available"
        ),
        "{out}"
    );
}

#[test]
fn prefer_live_passes_over_a_better_destination_that_cannot_be_reached_live() {
    // `best` is empty (ShootCount ranks it first) but runs another gardenlet; `live` has one
    // shoot already and the same gardenlet as the source
    let file = tmp(
        "prefer.yaml",
        &format!(
            "{}{}{}{}{}{CLOUD_PROFILE}",
            seed("old", "eu-west-1", "v1.130.0", "int.example.com"),
            seed("best", "eu-west-1", "v1.131.0", "int.example.com"),
            seed("live", "eu-west-1", "v1.130.0", "int.example.com"),
            shoot("ha", "old", true),
            shoot("resident", "live", false),
        ),
    );
    let plain = plan_json(&file, &["--live-migration"]);
    let m = move_of(&plain, "garden-dev/ha");
    assert_eq!(m["to"], "best", "{m:#}");
    assert_eq!(m["migration"]["kind"], "classic");
    assert_eq!(
        m["migration"]["notLive"],
        serde_json::json!(["the gardenlets differ (old: v1.130.0, best: v1.131.0)"])
    );
    let preferred = plan_json(&file, &["--live-migration", "--prefer-live"]);
    let m = move_of(&preferred, "garden-dev/ha");
    assert_eq!(m["to"], "live", "{m:#}");
    assert_eq!(m["migration"]["kind"], "live");
    assert!(
        m["reason"]
            .as_str()
            .unwrap()
            .contains("best (score 100.0) ranks higher but cannot be reached live"),
        "{m:#}"
    );
    // --prefer-live needs --live-migration
    let (code, _, err) = run(bin().args([
        "plan",
        "drain",
        "old",
        "-f",
        file.to_str().unwrap(),
        "--prefer-live",
    ]));
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_seed_change_gardener_apiserver_refuses_is_never_planned() {
    // the only other seed has another internal domain
    let file = tmp(
        "refused.yaml",
        &format!(
            "{}{}{}{CLOUD_PROFILE}",
            seed("old", "eu-west-1", "v1", "int.example.com"),
            seed("new", "eu-west-1", "v1", "int.example.org"),
            shoot("ha", "old", true),
        ),
    );
    let plan = plan_json(&file, &["--live-migration"]);
    assert!(plan["moves"].as_array().unwrap().is_empty(), "{plan:#}");
    let blocked = &plan["blocked"][0];
    assert_eq!(blocked["category"], "no migration destination");
    assert!(
        blocked["reason"]
            .as_str()
            .unwrap()
            .contains("the internal domain would change from \"int.example.com\" (old) to \"int.example.org\" (new)"),
        "{blocked:#}"
    );
}

#[test]
fn binding_documents_carry_the_live_migration_annotation_exactly_for_live_moves() {
    let file = tmp(
        "yaml.yaml",
        &format!(
            "{}{}{}{}{CLOUD_PROFILE}",
            seed("old", "eu-west-1", "v1", "int.example.com"),
            seed("new", "eu-west-1", "v1", "int.example.com"),
            shoot("ha", "old", true),
            shoot("single", "old", false),
        ),
    );
    let yaml = |extra: &[&str]| {
        let out = drain(&file, "yaml", extra);
        let docs: Vec<serde_yaml_ng::Value> = serde_yaml_ng::Deserializer::from_str(&out)
            .map(|d| serde::Deserialize::deserialize(d).unwrap())
            .collect();
        docs.into_iter()
            .map(|d| {
                (
                    d["metadata"]["name"].as_str().unwrap().to_string(),
                    d["metadata"]["annotations"]["migration.gardener.cloud/live-migrate"]
                        .as_str()
                        .map(str::to_string),
                )
            })
            .collect::<Vec<_>>()
    };
    let mut live = yaml(&["--live-migration"]);
    live.sort();
    assert_eq!(
        live,
        [("ha".into(), Some("true".into())), ("single".into(), None)]
    );
    let mut classic = yaml(&[]);
    classic.sort();
    assert_eq!(classic, [("ha".into(), None), ("single".into(), None)]);
}

#[test]
fn a_plan_is_stamped_with_the_landscape_it_was_computed_from() {
    let text = |rv: &str| {
        format!(
            "{}{}{}{CLOUD_PROFILE}",
            seed("old", "eu-west-1", "v1", "int.example.com"),
            seed("new", "eu-west-1", "v1", "int.example.com"),
            shoot("ha", "old", true).replace(
                "resourceVersion: \"7\"",
                &format!("resourceVersion: \"{rv}\"")
            ),
        )
    };
    let a = plan_json(&tmp("stamp-a.yaml", &text("7")), &[]);
    let again = plan_json(&tmp("stamp-b.yaml", &text("7")), &[]);
    let changed = plan_json(&tmp("stamp-c.yaml", &text("8")), &[]);
    let stamp = &a["stamp"];
    assert_eq!(stamp["seeds"], 2);
    assert_eq!(stamp["shoots"], 1);
    assert_eq!(stamp["liveMigration"], false);
    assert!(
        stamp["generator"]
            .as_str()
            .unwrap()
            .starts_with("gardener-scheduler ")
    );
    assert!(stamp["computedAt"].as_str().unwrap().ends_with('Z'));
    assert_eq!(
        stamp["landscape"], again["stamp"]["landscape"],
        "same objects, same digest"
    );
    assert_ne!(
        stamp["landscape"], changed["stamp"]["landscape"],
        "another resourceVersion, another digest"
    );
}

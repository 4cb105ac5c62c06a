//! Files decided as gardener-apiserver would store them: small landscapes where one of
//! upstream's defaults decides (or, for those the decision already reads the same way, does not),
//! each decided by `simulate` and `plan` with the defaults and with `--as-written`.

use serde_json::Value;

#[path = "support/cli.rs"]
mod cli_support;
use cli_support::{assert_has, bin, elements, run, string, tmp};

const NOW: &str = "2026-12-01T00:00:00Z";

const PROFILE: &str = "apiVersion: core.gardener.cloud/v1beta1
kind: CloudProfile
metadata: {name: aws}
spec: {type: aws}
";

/// A ready seed in eu-west-1; `extra` is added to its `spec` (indented by four spaces).
fn seed(name: &str, extra: &str) -> String {
    format!(
        "---
apiVersion: core.gardener.cloud/v1beta1
kind: Seed
metadata: {{name: {name}}}
spec:
    provider: {{type: aws, region: eu-west-1}}
    networks: {{nodes: 10.250.0.0/16, pods: 100.96.0.0/11, services: 100.64.0.0/13}}
{extra}status:
  lastOperation: {{type: Reconcile, state: Succeeded}}
  conditions: [{{type: GardenletReady, status: \"True\"}}]
"
    )
}

/// A pending shoot in eu-west-1 with workers; `spec_extra` is added to its `spec`, `rest` after it.
/// The profile, the seed s1 and the shoot garden-dev/web with `spec_extra` and `rest`.
fn s1_and_web(spec_extra: &str, rest: &str) -> String {
    format!(
        "{PROFILE}{}{}",
        seed("s1", ""),
        shoot("garden-dev", "web", spec_extra, rest)
    )
}

fn shoot(namespace: &str, name: &str, spec_extra: &str, rest: &str) -> String {
    format!(
        "---
apiVersion: core.gardener.cloud/v1beta1
kind: Shoot
metadata: {{name: {name}, namespace: {namespace}}}
spec:
    cloudProfileName: aws
    region: eu-west-1
    provider: {{type: aws, workers: [{{name: w}}]}}
{spec_extra}{rest}"
    )
}

/// `simulate -o json`: each shoot's seed, or `None` when unschedulable.
fn placed(file: &std::path::Path, as_written: bool) -> Vec<(String, Option<String>)> {
    let mut c = bin();
    c.args(["simulate", "--now", NOW, "-o", "json", "-f"])
        .arg(file);
    if as_written {
        c.arg("--as-written");
    }
    let (code, out, err) = run(&mut c);
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
    elements(&v, "decisions")
        .map(|d| (string(d, "shoot"), d["seed"].as_str().map(str::to_string)))
        .collect()
}

struct Case {
    name: &'static str,
    manifests: String,
    /// The seed of the one shoot, with upstream's defaults and as written.
    defaulted: Option<&'static str>,
    as_written: Option<&'static str>,
}

fn cases() -> Vec<Case> {
    let protected = "    taints: [{key: seed.gardener.cloud/protected}]\n";
    vec![
        Case {
            name: "a shoot in namespace garden tolerates protected seeds",
            manifests: format!(
                "{PROFILE}{}{}",
                seed("protected", protected),
                shoot("garden", "ops", "", "")
            ),
            defaulted: Some("protected"),
            as_written: None,
        },
        Case {
            name: "a shoot in another namespace does not",
            manifests: format!(
                "{PROFILE}{}{}",
                seed("protected", protected),
                shoot("garden-dev", "ops", "", "")
            ),
            defaulted: None,
            as_written: None,
        },
        Case {
            name: "the added toleration without a value overrides one with a value",
            manifests: format!(
                "{PROFILE}{}{}",
                seed(
                    "protected-x",
                    "    taints: [{key: seed.gardener.cloud/protected, value: x}]\n"
                ),
                shoot(
                    "garden",
                    "ops",
                    "    tolerations: [{key: seed.gardener.cloud/protected, value: x}]\n",
                    ""
                )
            ),
            defaulted: None,
            as_written: Some("protected-x"),
        },
        Case {
            name: "without spec.networking, status.networking without services fits no seed",
            manifests: s1_and_web(
                "",
                "status:\n  networking: {nodes: [10.1.0.0/16], pods: [10.2.0.0/16]}\n",
            ),
            defaulted: None,
            as_written: Some("s1"),
        },
        Case {
            name: "without spec.networking, IPv6 status networks overlapping the seed are checked",
            manifests: format!(
                "{PROFILE}{}{}",
                seed(
                    "v6",
                    "    networks: {pods: \"2001:db8:1::/48\", services: \"2001:db8:2::/108\"}\n"
                )
                .replace(
                    "    networks: {nodes: 10.250.0.0/16, pods: 100.96.0.0/11, services: 100.64.0.0/13}\n",
                    ""
                ),
                shoot(
                    "garden-dev",
                    "web",
                    "",
                    "status:\n  networking: {pods: [\"2001:db8:1::/56\"], services: [\"2001:db8:3::/108\"]}\n"
                )
            ),
            defaulted: None,
            as_written: Some("v6"),
        },
        Case {
            name: "without spec.networking, a seed default in a reserved range is checked",
            manifests: format!(
                "{PROFILE}{}{}",
                seed("s1", "").replace(
                    "services: 100.64.0.0/13}",
                    "services: 100.64.0.0/13, shootDefaults: {pods: 240.0.0.0/16}}"
                ),
                shoot("garden-dev", "web", "", "")
            ),
            defaulted: None,
            as_written: Some("s1"),
        },
        Case {
            name: "a seed whose scheduling has no visible is stored invisible",
            manifests: format!(
                "{PROFILE}{}{}",
                seed("s1", "    settings: {scheduling: {}}\n"),
                shoot("garden-dev", "web", "", "")
            ),
            defaulted: None,
            as_written: Some("s1"),
        },
        Case {
            name: "a seed without scheduling settings is visible either way",
            manifests: format!(
                "{PROFILE}{}{}",
                seed("s1", "    settings: {verticalPodAutoscaler: {enabled: true}}\n"),
                shoot("garden-dev", "web", "", "")
            ),
            defaulted: Some("s1"),
            as_written: Some("s1"),
        },
        Case {
            name: "purpose and IP families defaults read as the decision reads them unset",
            manifests: s1_and_web(
                "    networking: {pods: 10.3.0.0/16, services: 10.4.0.0/16}\n",
                "",
            ),
            defaulted: Some("s1"),
            as_written: Some("s1"),
        },
    ]
}

#[test]
fn each_default_decides_as_gardener_apiserver_would_store_the_files() {
    let mut problems = Vec::new();
    for (i, case) in cases().into_iter().enumerate() {
        let file = tmp(&format!("case-{i}.yaml"), &case.manifests);
        for (as_written, want) in [(false, case.defaulted), (true, case.as_written)] {
            let got = placed(&file, as_written);
            assert_eq!(got.len(), 1, "{}: one pending shoot: {got:?}", case.name);
            if got[0].1.as_deref() != want {
                problems.push(format!(
                    "{} (as written: {as_written}): placed on {:?}, expected {want:?}",
                    case.name, got[0].1
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn explain_names_the_defaults_that_decided() {
    let manifests = format!(
        "{PROFILE}{}{}{}",
        seed(
            "protected",
            "    taints: [{key: seed.gardener.cloud/protected}]\n"
        ),
        seed("hidden", "    settings: {scheduling: {}}\n"),
        shoot("garden", "ops", "", "")
    );
    let file = tmp("explain.yaml", &manifests);
    let explain = |as_written: bool| {
        let mut c = bin();
        c.args(["simulate", "--now", NOW, "--explain", "garden/ops", "-f"])
            .arg(&file);
        if as_written {
            c.arg("--as-written");
        }
        let (code, out, err) = run(&mut c);
        assert_eq!(code, 0, "{err}");
        out
    };
    let defaulted = explain(false);
    assert_has(
        &defaulted,
        &[
            "default: toleration for seed.gardener.cloud/protected added: the shoot is in namespace garden (pkg/apis/core/v1beta1/defaults_shoot.go)",
        ],
    );
    assert_has(
        &defaulted,
        &["default: seed hidden: spec.settings.scheduling.visible set to false"],
    );
    assert_has(&defaulted, &["Scheduled to seed \"protected\""]);
    assert!(
        !defaulted.contains("spec.purpose"),
        "a default that changes nothing is not named: {defaulted}"
    );
    let written = explain(true);
    assert!(!written.contains("default:"), "{written}");
    assert!(
        written.contains("Scheduled to seed \"hidden\""),
        "as written, the seed without visible is visible and the protected one not tolerated: {written}"
    );
}

/// `plan drain`: the shoot in namespace garden can only move to the protected seed.
#[test]
fn plan_reads_the_files_with_the_defaults_too() {
    // Migration restores etcd from the source seed's backup: both seeds have one.
    let with_backup = |name: &str, extra: &str| {
        seed(name, &format!("    backup: {{provider: aws}}\n{extra}")).replace(
            "conditions: [",
            "conditions: [{type: BackupBucketsReady, status: \"True\"}, ",
        )
    };
    let manifests = format!(
        "{PROFILE}{}{}{}",
        with_backup("old", ""),
        with_backup(
            "protected",
            "    taints: [{key: seed.gardener.cloud/protected}]\n"
        ),
        shoot("garden", "ops", "    seedName: old\n", "")
    );
    let file = tmp("plan.yaml", &manifests);
    let plan = |as_written: bool| {
        let mut c = bin();
        c.args(["plan", "drain", "old", "--now", NOW, "-o", "json", "-f"])
            .arg(&file);
        if as_written {
            c.arg("--as-written");
        }
        let (code, out, err) = run(&mut c);
        assert_eq!(code, 0, "{err}");
        let v: Value = serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"));
        let moves: Vec<(String, String)> = elements(&v, "moves")
            .map(|m| (string(m, "to"), string(m, "explanation")))
            .collect();
        (moves, v["blocked"].as_array().unwrap().len())
    };
    let (moves, blocked) = plan(false);
    assert_eq!((moves.len(), blocked), (1, 0), "{moves:?}");
    assert_eq!(moves[0].0, "protected");
    assert!(
        moves[0]
            .1
            .contains("default: toleration for seed.gardener.cloud/protected added"),
        "the move's explanation names the default: {}",
        moves[0].1
    );
    assert_eq!(plan(true), (vec![], 1));
}

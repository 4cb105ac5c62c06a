//! The five HTML reports (`plan … -o html`, `simulate -o html`, with `--compare` and with
//! `--replay`, `explain -o html`) write every value from the landscape and the configuration as text: markup in a
//! profile name or in a seed's condition reaches the page escaped, in element text and in
//! attribute values alike, and the page runs no script but its own. Control and bidi characters
//! (which a stored region may hold) are shown as `\u{…}`.

#[path = "support/cli.rs"]
mod cli_support;
use cli_support::{bin, run, tmp};

/// A script that would run if a value reached the page unescaped.
const SCRIPT: &str = "<script>alert(1)</script>";

fn landscape() -> String {
    // The condition status ends an attribute value if unescaped: `title="…"><script>…`.
    format!(
        r#"
apiVersion: core.gardener.cloud/v1beta1
kind: CloudProfile
metadata: {{name: aws}}
spec: {{type: aws}}
---
apiVersion: core.gardener.cloud/v1beta1
kind: Seed
metadata: {{name: good-seed}}
spec:
  provider: {{type: aws, region: eu-west-1, zones: [a, b, c]}}
  networks: {{nodes: 10.0.0.0/16, pods: 10.96.0.0/11, services: 10.64.0.0/13}}
status:
  lastOperation: {{type: Reconcile, state: Succeeded}}
  conditions: [{{type: GardenletReady, status: "True"}}]
---
apiVersion: core.gardener.cloud/v1beta1
kind: Seed
metadata: {{name: broken-seed}}
spec:
  provider: {{type: aws, region: eu-west-1, zones: [a, b, c]}}
  networks: {{nodes: 10.0.0.0/16, pods: 10.96.0.0/11, services: 10.64.0.0/13}}
status:
  lastOperation: {{type: Reconcile, state: Succeeded}}
  conditions: [{{type: GardenletReady, status: '"/>{SCRIPT}'}}]
---
apiVersion: core.gardener.cloud/v1beta1
kind: Seed
metadata: {{name: odd-seed}}
spec:
  provider: {{type: aws, region: "eu-west-1\u202E\e[2J"}}
status:
  lastOperation: {{type: Reconcile, state: Succeeded}}
  conditions: [{{type: GardenletReady, status: "True"}}]
---
apiVersion: core.gardener.cloud/v1beta1
kind: Shoot
metadata:
  name: bound
  namespace: garden-dev
  creationTimestamp: "2026-11-01T00:00:00Z"
  annotations: {{scheduling.gardener.cloud/decision: '{{"v":1,"seed":"other{SCRIPT}","time":"2026-11-01T00:00:00Z","total":100,"priorities":{{}}}}'}}
spec:
  cloudProfile: {{name: aws}}
  region: eu-west-1
  seedName: good-seed
  provider: {{type: aws, workers: [{{name: w}}]}}
  networking: {{nodes: 10.180.0.0/16}}
---
apiVersion: core.gardener.cloud/v1beta1
kind: Shoot
metadata: {{name: pending, namespace: garden-dev, creationTimestamp: "2026-11-02T00:00:00Z"}}
spec:
  cloudProfile: {{name: aws}}
  region: eu-west-1
  provider: {{type: aws, workers: [{{name: w}}]}}
  networking: {{nodes: 10.181.0.0/16}}
"#
    )
}

/// A configuration whose one profile is named `id`.
fn config(id: &str) -> String {
    format!(
        "apiVersion: scheduler.config.gardener.cloud/v1alpha1\nkind: SchedulerConfiguration\n\
         schedulers:\n  shoot:\n    profiles:\n      - id: '{id}'\n        profile: {{}}\n"
    )
}

#[test]
fn markup_in_names_and_messages_reaches_every_report_as_text() {
    let l = tmp("landscape.yaml", &landscape());
    let old = tmp("old.yaml", &config(&format!("old{SCRIPT}")));
    let new = tmp("new.yaml", &config(&format!("new\"{SCRIPT}")));
    let reports: [(&str, Vec<&std::ffi::OsStr>); 5] = [
        (
            "plan drain",
            vec!["plan".as_ref(), "drain".as_ref(), "good-seed".as_ref()],
        ),
        ("simulate", vec!["simulate".as_ref()]),
        (
            "simulate --compare",
            vec!["simulate".as_ref(), "--compare".as_ref(), old.as_os_str()],
        ),
        (
            "simulate --replay",
            vec!["simulate".as_ref(), "--replay".as_ref()],
        ),
        // A bound shoot: its untrusted record and the feasible seeds' chart.
        (
            "explain",
            vec!["explain".as_ref(), "garden-dev/bound".as_ref()],
        ),
    ];
    for (name, args) in reports {
        let (code, html, err) = run(bin()
            .args(args)
            .args(["--now", "2026-12-01T12:00:00Z", "-o", "html", "-f"])
            .arg(&l)
            .arg("--config")
            .arg(&new));
        assert_eq!(code, 0, "{name}: {err}");
        assert!(html.starts_with("<!DOCTYPE html>"), "{name}: {html}");
        // The one script of the page: open every explanation before printing.
        assert_eq!(html.matches("<script").count(), 1, "{name}: {html}");
        assert!(!html.contains("alert(1)</script>"), "{name}: {html}");
        assert!(!html.contains("\"/><script"), "{name}: {html}");
        // The profile name, in the meta line.
        assert!(
            html.contains("new&#34;&#60;script&#62;alert(1)&#60;/script&#62;"),
            "{name}: {html}"
        );
        // A region gardener-apiserver stores with a bidi override and an escape sequence: shown
        // visibly on the plan page, which groups the seeds by region, and raw nowhere.
        if name == "plan drain" {
            assert!(
                html.contains("eu-west-1\\u{202e}\\u{1b}[2J"),
                "{name}: {html}"
            );
        }
        assert!(!html.contains(['\u{202e}', '\u{1b}']), "{name}: {html}");
        if name == "explain" {
            // The record's seed, in the record's table and in the problem that names it.
            assert_eq!(
                html.matches("other&#60;script&#62;alert(1)&#60;/script&#62;")
                    .count(),
                2,
                "{name}: {html}"
            );
            assert!(
                html.contains("<h2>Feasible seeds now (1)</h2>"),
                "{name}: {html}"
            );
            assert!(
                html.contains("Its seed good-seed ranks 1 of 1: chosen now."),
                "{name}: {html}"
            );
            continue;
        }
        // The broken seed's condition: in a badge's title on the pages with seeds.
        if name != "simulate --compare" {
            assert!(
                html.contains("title=\"seed condition GardenletReady is &#34;/&#62;&#60;script"),
                "{name}: {html}"
            );
        }
    }
}

//! Every HTML report `src/report/pages.tsv` lists (`plan … -o html`, `simulate -o html`, with
//! `--compare` and with `--replay`, `explain -o html`) writes every value from the landscape and
//! the configuration as text: markup in a profile name or in a seed's condition reaches the page
//! escaped, in element text and in attribute values alike, and the page runs no script but its
//! own. Control and bidi characters (which a stored region may hold) are shown as `\u{…}`.

#[path = "support/cli.rs"]
mod cli_support;
use cli_support::{bin, run, tmp};

/// The table of pages, which hack/report-check.sh reads too.
const PAGES: &str = "src/report/pages.tsv";

/// Every page of the table: its name and the words of its command line.
fn pages() -> Vec<(String, Vec<String>)> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(PAGES);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{PAGES}: {e}"));
    let pages: Vec<(String, Vec<String>)> = text
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .map(|l| {
            let columns: Vec<&str> = l.split('\t').collect();
            // report-check needs the sections a page must show.
            assert!(columns.len() >= 3, "{PAGES}: a line without sections: {l}");
            let words = columns[1].split_whitespace().map(String::from).collect();
            (columns[0].to_string(), words)
        })
        .collect();
    assert!(!pages.is_empty(), "{PAGES} lists no page");
    pages
}

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

/// A configuration whose first profile, named `id`, is a freeze window around the test's now.
fn frozen_config(id: &str) -> String {
    format!(
        "apiVersion: scheduler.config.gardener.cloud/v1alpha1\nkind: SchedulerConfiguration\n\
         schedulers:\n  shoot:\n    profiles:\n      - id: '{id}'\n        schedule: {{between: \
         {{start: '2026-11-30T00:00:00Z', end: '2026-12-02T00:00:00Z'}}}}\n        freeze: true\n\
         \x20     - id: default\n        profile: {{}}\n"
    )
}

#[test]
fn markup_in_names_and_messages_reaches_every_report_as_text() {
    let l = tmp("landscape.yaml", &landscape());
    let old = tmp("old.yaml", &config(&format!("old{SCRIPT}")));
    let new = tmp("new.yaml", &config(&format!("new\"{SCRIPT}")));
    let frozen = tmp("frozen.yaml", &frozen_config(&format!("frozen\"{SCRIPT}")));
    let pages = pages();
    let names: Vec<&str> = pages.iter().map(|(name, _)| name.as_str()).collect();
    // The pages checked one by one below are all in the table.
    for name in ["plan", "compare", "explain", "explain-bound", "deferred"] {
        assert!(names.contains(&name), "{name} is not in {PAGES}: {names:?}");
    }
    for (name, words) in &pages {
        let name = name.as_str();
        // The table's words in braces, for this test's landscape.
        let mut args: Vec<&std::ffi::OsStr> = Vec::new();
        for word in words {
            match word.as_str() {
                "{drain}" => args.push("good-seed".as_ref()),
                "{pending}" => args.push("garden-dev/pending".as_ref()),
                "{bound}" => args.push("garden-dev/bound".as_ref()),
                "{config}" => args.extend(["--config".as_ref(), new.as_os_str()]),
                "{frozen}" => args.extend(["--config".as_ref(), frozen.as_os_str()]),
                "{compare}" => args.extend([
                    "--config".as_ref(),
                    new.as_os_str(),
                    "--compare".as_ref(),
                    old.as_os_str(),
                ]),
                w if w.starts_with('{') => panic!("{PAGES}: page {name}: no value for {w}"),
                w => args.push(w.as_ref()),
            }
        }
        let (code, html, err) = run(bin()
            .args(args)
            .args(["--now", "2026-12-01T12:00:00Z", "-o", "html", "-f"])
            .arg(&l));
        assert_eq!(code, 0, "{name}: {err}");
        assert!(html.starts_with("<!DOCTYPE html>"), "{name}: {html}");
        // The one script of the page: open every explanation before printing.
        assert_eq!(html.matches("<script").count(), 1, "{name}: {html}");
        assert!(!html.contains("alert(1)</script>"), "{name}: {html}");
        assert!(!html.contains("\"/><script"), "{name}: {html}");
        if name == "deferred" {
            // The freeze window's id, in the one message of the page.
            assert!(
                html.contains("freeze window &#34;frozen\\&#34;&#60;script&#62;alert(1)&#60;/script&#62;&#34; until 2026-12-02T00:00:00Z"),
                "{name}: {html}"
            );
            continue;
        }
        // The profile name, in the meta line.
        assert!(
            html.contains("new&#34;&#60;script&#62;alert(1)&#60;/script&#62;"),
            "{name}: {html}"
        );
        // A region gardener-apiserver stores with a bidi override and an escape sequence: shown
        // visibly on the plan page, which groups the seeds by region, and raw nowhere.
        if name == "plan" {
            assert!(
                html.contains("eu-west-1\\u{202e}\\u{1b}[2J"),
                "{name}: {html}"
            );
        }
        assert!(!html.contains(['\u{202e}', '\u{1b}']), "{name}: {html}");
        if name == "explain-bound" {
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
        if name == "explain" {
            // A pending shoot, decided now on the one seed that fits; no record to show.
            assert!(
                html.contains(
                    "It would go to good-seed now (schedulerName &#34;default-scheduler&#34;)."
                ),
                "{name}: {html}"
            );
            assert!(
                html.contains("<h2>Feasible seeds now (1)</h2>"),
                "{name}: {html}"
            );
            continue;
        }
        // The broken seed's condition: in a badge's title on the pages with seeds.
        if name != "compare" {
            assert!(
                html.contains("title=\"seed condition GardenletReady is &#34;/&#62;&#60;script"),
                "{name}: {html}"
            );
        }
    }
}

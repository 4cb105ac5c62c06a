//! The chart's alerts and dashboard (charts/gardener-scheduler/files/), rendered through the
//! chart by a real `helm`: the rules pass `promtool check rules` and the unit tests of
//! tests/monitoring/rules.test.yaml, every alert has a test that fires and one that stays quiet,
//! a summary, a description and a runbook section that exists, and the dashboard is the chart's
//! file. tests/e2e/prometheus.rs runs every expression against a real Prometheus scraping the
//! scheduler.

#[path = "support/common.rs"]
mod common;
#[path = "support/monitoring.rs"]
mod monitoring;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::fresh_dir;
use monitoring::*;
use serde::Deserialize;
use serde_yaml_ng::Value;

fn scratch_dir() -> PathBuf {
    fresh_dir(Path::new(env!("CARGO_TARGET_TMPDIR")), "monitoring")
}

fn unit_tests_file() -> PathBuf {
    repo().join("tests/monitoring/rules.test.yaml")
}

fn all_options() -> PathBuf {
    chart().join("ci/all-options-values.yaml")
}

/// Runs promtool with `args` in `dir`; returns (success, stdout + stderr).
fn promtool(dir: &Path, args: &[&str]) -> (bool, String) {
    let out = Command::new(prometheus_tool("promtool"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("running promtool");
    (
        out.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    )
}

/// The rendered rules in a directory of their own, as `rules.yaml`, next to the unit tests.
fn rules_dir(objects: &[Value]) -> PathBuf {
    let dir = scratch_dir();
    std::fs::write(dir.join("rules.yaml"), rule_file(objects)).unwrap();
    std::fs::copy(unit_tests_file(), dir.join("rules.test.yaml")).unwrap();
    dir
}

#[test]
fn the_rules_pass_promtool_check_with_default_and_all_options_values() {
    for values in [vec![], vec![all_options()]] {
        let dir = rules_dir(&render_monitoring(&values, &[]));
        let (ok, out) = promtool(&dir, &["check", "rules", "rules.yaml"]);
        assert!(ok, "promtool check rules ({values:?}):\n{out}");
        assert!(out.contains("SUCCESS: 13 rules found"), "{out}");
    }
}

#[test]
fn every_alert_passes_its_promtool_unit_tests() {
    let dir = rules_dir(&render_monitoring(&[], &[]));
    let (ok, out) = promtool(&dir, &["test", "rules", "rules.test.yaml"]);
    assert!(ok, "promtool test rules:\n{out}");
}

#[test]
fn the_unit_tests_fail_when_a_threshold_changes() {
    // the same tests against rules rendered with other thresholds: they must notice
    let objects = render_monitoring(
        &[],
        &[
            "prometheusRule.thresholds.pendingSeconds=9000",
            "prometheusRule.thresholds.bindErrorRatio=0.9",
        ],
    );
    let dir = rules_dir(&objects);
    let (ok, out) = promtool(&dir, &["test", "rules", "rules.test.yaml"]);
    assert!(!ok, "the unit tests pass whatever the thresholds:\n{out}");
    for alert in [
        "GardenerSchedulerShootsPendingWhileSeedsFit",
        "GardenerSchedulerBindErrors",
    ] {
        assert!(out.contains(&format!("alertname: {alert}")), "{out}");
    }
}

#[derive(Deserialize)]
struct UnitTests {
    tests: Vec<UnitTest>,
}

#[derive(Deserialize)]
struct UnitTest {
    #[serde(default)]
    alert_rule_test: Vec<AlertTest>,
}

#[derive(Deserialize)]
struct AlertTest {
    alertname: String,
    #[serde(default)]
    exp_alerts: Vec<Value>,
}

#[test]
fn every_alert_has_a_test_where_it_fires_and_one_where_it_stays_quiet() {
    let tests: UnitTests =
        serde_yaml_ng::from_str(&std::fs::read_to_string(unit_tests_file()).unwrap()).unwrap();
    let cases: Vec<&AlertTest> = tests
        .tests
        .iter()
        .flat_map(|t| &t.alert_rule_test)
        .collect();
    let alerts = alerts(&render_monitoring(&[], &[]));
    let names: BTreeSet<&str> = alerts.iter().map(|a| a.name.as_str()).collect();
    for name in &names {
        assert!(
            cases
                .iter()
                .any(|c| c.alertname == *name && !c.exp_alerts.is_empty()),
            "{name}: no test where it fires"
        );
        assert!(
            cases
                .iter()
                .any(|c| c.alertname == *name && c.exp_alerts.is_empty()),
            "{name}: no test where it stays quiet"
        );
    }
    for c in &cases {
        assert!(
            names.contains(c.alertname.as_str()),
            "a test of an alert the chart does not have: {}",
            c.alertname
        );
    }
}

/// GitHub's anchor of a Markdown heading.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

#[test]
fn every_alert_says_what_to_do_and_links_a_runbook_section_that_exists() {
    let doc = std::fs::read_to_string(repo().join("docs/operations/troubleshooting.md")).unwrap();
    let anchors: BTreeSet<String> = doc
        .lines()
        .filter_map(|l| l.strip_prefix('#'))
        .map(|l| anchor(l.trim_start_matches('#')))
        .collect();
    let base = "https://github.com/gardener/gardener-scheduler/blob/main/docs/operations/troubleshooting.md#";
    for alert in alerts(&render_monitoring(&[], &[])) {
        let a = &alert.rule["annotations"];
        for key in ["summary", "description"] {
            let text = a[key].as_str().unwrap_or_default();
            assert!(text.len() > 20, "{}: {key} {text:?}", alert.name);
        }
        let url = a["runbook_url"].as_str().expect("runbook_url");
        let section = url.strip_prefix(base).unwrap_or_else(|| {
            panic!(
                "{}: runbook_url {url} is not in troubleshooting.md",
                alert.name
            )
        });
        assert_eq!(
            section,
            alert.name.to_lowercase(),
            "{}: one section per alert",
            alert.name
        );
        assert!(
            anchors.contains(section),
            "{}: troubleshooting.md has no section #{section}",
            alert.name
        );
        assert!(
            ["critical", "warning"]
                .contains(&alert.rule["labels"]["severity"].as_str().unwrap_or("")),
            "{}: severity",
            alert.name
        );
    }
}

#[test]
fn thresholds_job_runbook_and_labels_come_from_the_values() {
    let objects = render_monitoring(&[all_options()], &[]);
    let rule = one(&objects, "PrometheusRule", "");
    assert_eq!(rule["metadata"]["labels"]["release"], "prometheus");
    let by_name = |name: &str| {
        alerts(&objects)
            .into_iter()
            .find(|a| a.name == name)
            .unwrap_or_else(|| panic!("{name}"))
    };
    let down = by_name("GardenerSchedulerDown");
    assert_eq!(down.expr, r#"absent(up{job="gardener-scheduler-ci"} == 1)"#);
    assert_eq!(down.rule["for"], "10m");
    assert!(
        down.rule["annotations"]["runbook_url"]
            .as_str()
            .unwrap()
            .starts_with("https://docs.example.com/gardener-scheduler/troubleshooting.md#")
    );
    assert!(
        by_name("GardenerSchedulerShootsPendingWhileSeedsFit")
            .expr
            .ends_with("> 600")
    );
    assert_eq!(
        by_name("GardenerSchedulerShootsUnschedulable").rule["for"],
        "1h"
    );
    assert_eq!(by_name("GardenerSchedulerBindsForbidden").rule["for"], "2m");
    let errors = by_name("GardenerSchedulerBindErrors");
    assert!(errors.expr.ends_with("> 0.2"), "{}", errors.expr);
    assert_eq!(errors.rule["for"], "30m");
    let stale = by_name("GardenerSchedulerFeedStale");
    assert!(stale.expr.ends_with("> 90"));
    assert_eq!(stale.rule["for"], "10m");
    assert!(
        by_name("GardenerSchedulerWatchRestarting")
            .expr
            .ends_with("> 10")
    );
    assert_eq!(by_name("GardenerSchedulerNoLeader").rule["for"], "3m");

    // the default job is the one a ServiceMonitor of the chart scrapes: the Service's name
    let objects = render_monitoring(&[], &[]);
    let service = one(&objects, "Service", "-metrics");
    let job = service["metadata"]["name"].as_str().unwrap();
    let down = alerts(&objects)
        .into_iter()
        .find(|a| a.name == "GardenerSchedulerDown")
        .unwrap();
    assert_eq!(down.expr, format!(r#"absent(up{{job="{job}"}} == 1)"#));
}

#[test]
fn the_dashboard_configmap_carries_the_charts_file_with_the_sidecars_label() {
    let objects = render_monitoring(&[], &[]);
    let cm = one(&objects, "ConfigMap", "-dashboard");
    assert_eq!(cm["metadata"]["labels"]["grafana_dashboard"], "1");
    assert_eq!(cm["metadata"]["namespace"], NAMESPACE);
    let file: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(chart().join("files/dashboard.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(dashboard(&objects), file);

    let objects = render_monitoring(&[all_options()], &[]);
    let cm = one(&objects, "ConfigMap", "-dashboard");
    assert_eq!(
        cm["metadata"]["labels"]["dashboard.monitoring.gardener.cloud/garden"],
        "true"
    );
    assert_eq!(cm["metadata"]["namespace"], "monitoring");
    assert!(cm["metadata"]["annotations"]["k8s-sidecar-target-directory"].is_string());
}

#[test]
fn the_dashboard_has_a_panel_for_each_thing_an_operator_watches() {
    let d = dashboard(&render_monitoring(&[], &[]));
    let queries = panel_queries(&d);
    let panel_reading = |metric: &str| {
        queries
            .iter()
            .find(|(_, q)| {
                selectors(&without_dashboard_variables(q))
                    .iter()
                    .any(|s| s.starts_with(metric))
            })
            .map(|(t, _)| t.clone())
            .unwrap_or_else(|| panic!("no panel reads {metric}"))
    };
    for metric in [
        "gardener_scheduler_schedule_attempts_total",
        "gardener_scheduler_pending_shoots_by_reason",
        "gardener_scheduler_unschedulable_shoots",
        "gardener_scheduler_shoot_create_to_bound_seconds_bucket",
        "gardener_scheduler_bind_errors_total",
        "gardener_scheduler_seed_allocatable_shoots",
        "gardener_scheduler_seed_shoots",
        "gardener_scheduler_leader",
        "workqueue_depth",
    ] {
        panel_reading(metric);
    }
    for panel in d["panels"].as_array().unwrap() {
        assert_eq!(panel["datasource"], "${datasource}", "{}", panel["title"]);
        assert!(panel["description"].as_str().is_some_and(|t| !t.is_empty()));
    }
    let ids: BTreeSet<i64> = d["panels"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["id"].as_i64().unwrap())
        .collect();
    assert_eq!(
        ids.len(),
        d["panels"].as_array().unwrap().len(),
        "panel ids are unique"
    );
}

#[test]
fn alerts_and_dashboard_are_off_by_default() {
    let objects = render(&[], &[]);
    assert!(!objects.iter().any(|o| o["kind"] == "PrometheusRule"));
    assert!(!objects.iter().any(|o| {
        o["metadata"]["name"]
            .as_str()
            .is_some_and(|n| n.ends_with("-dashboard"))
    }));
}

#[test]
fn selectors_are_the_series_an_expression_reads() {
    assert_eq!(
        selectors(
            r#"sum by (kind, reason) (increase(gardener_scheduler_watch_restarts_total[15m])) > 5"#
        ),
        ["gardener_scheduler_watch_restarts_total"]
    );
    assert_eq!(
        selectors(
            r#"max by (seed) (a_shoots) / on (seed) group_left max by (seed) (b{x="1", y!="2"})"#
        ),
        ["a_shoots", r#"b{x="1", y!="2"}"#]
    );
    assert_eq!(
        selectors(r#"absent(up{job="j"} == 1) or x{r=~"undecided|bind_failed"} > 0.5"#),
        [
            r#"up{job="j"}"#,
            r#"x{r="undecided"}"#,
            r#"x{r="bind_failed"}"#
        ]
    );
    assert_eq!(
        selectors(r#"histogram_quantile(0.99, sum by (le) (rate(h_bucket{c=~"4.."}[5m]))) > 1e3"#),
        [r#"h_bucket{c=~"4.."}"#]
    );
}

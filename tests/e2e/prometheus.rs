//! The chart's dashboard and alerts against a real Prometheus (Debian's `prometheus`, installed
//! by `hack/ensure-package.sh prometheus promtool`) scraping the scheduler every second during a
//! burst: every dashboard query returns series, every alert expression evaluates, and every
//! series selector inside them (each value of an `=~"a|b"` on its own) matches series the
//! scheduler serves. A query naming a metric or label the scheduler does not serve fails here.

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::monitoring_files as files;
use crate::support::proxy::{REFUSE_LABEL, RefusingProxy};
use crate::support::*;
use gardener_scheduler::api::Shoot;

/// A Prometheus process with its own configuration and storage in a temporary directory.
struct Prometheus {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Prometheus {
    /// Scrapes `127.0.0.1:target` every second as job `job`.
    fn start(job: &str, target: u16) -> Prometheus {
        let dir = std::env::temp_dir().join(format!(
            "gardener-scheduler-e2e-prometheus-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("data")).unwrap();
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global: {{scrape_interval: 1s, scrape_timeout: 1s, evaluation_interval: 1s}}\n\
                 scrape_configs:\n  - job_name: {job}\n    static_configs:\n      - targets: ['127.0.0.1:{target}']\n"
            ),
        )
        .unwrap();
        let port = free_port();
        let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
        let child = Command::new(files::prometheus_tool("prometheus"))
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .arg("--web.enable-lifecycle")
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("starting prometheus");
        Prometheus { child, port, dir }
    }

    fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("prometheus.log")).unwrap_or_default()
    }

    async fn wait_ready(&self) {
        let start = Instant::now();
        while http_get(self.port, "/-/ready").map(|(s, _)| s) != Some(200) {
            assert!(
                start.elapsed() < DEADLINE,
                "prometheus did not become ready:\n{}",
                self.log()
            );
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
    }

    /// The result of an instant query, or Prometheus' error.
    fn query(&self, expr: &str) -> Result<Vec<Value>, String> {
        let path = format!("/api/v1/query?query={}", percent_encode(expr));
        let (status, body) =
            http_get(self.port, &path).ok_or_else(|| "prometheus did not answer".to_string())?;
        let answer: Value = serde_json::from_str(&body)
            .map_err(|e| format!("HTTP {status}, not JSON ({e}): {body}"))?;
        if answer["status"] != "success" {
            return Err(format!("HTTP {status}: {}", answer["error"]));
        }
        Ok(answer["data"]["result"]
            .as_array()
            .cloned()
            .unwrap_or_default())
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn percent_encode(s: &str) -> String {
    s.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// One query to check: where it comes from, the expression, and whether the expression itself
/// must return series (a dashboard query) or only evaluate (an alert, quiet while healthy).
struct Check {
    origin: String,
    expr: String,
    must_return: bool,
}

fn checks() -> Vec<Check> {
    let objects = files::render_monitoring(&[], &[]);
    let mut out = Vec::new();
    for (panel, expr) in files::panel_queries(&files::dashboard(&objects)) {
        out.push(Check {
            origin: format!("dashboard panel {panel:?}"),
            expr: files::without_dashboard_variables(&expr),
            must_return: true,
        });
    }
    for alert in files::alerts(&objects) {
        out.push(Check {
            origin: format!("alert {}", alert.name),
            expr: alert.expr,
            must_return: false,
        });
    }
    out
}

/// What does not hold now: queries that fail, dashboard queries without series, selectors that
/// match nothing.
fn problems(prometheus: &Prometheus, checks: &[Check]) -> Vec<String> {
    let mut out = Vec::new();
    for c in checks {
        match prometheus.query(&c.expr) {
            Err(e) => out.push(format!("{}: {} fails: {e}", c.origin, c.expr)),
            Ok(r) if c.must_return && r.is_empty() => {
                out.push(format!("{}: {} returns no series", c.origin, c.expr))
            }
            Ok(_) => {}
        }
        let selectors = files::selectors(&c.expr);
        if selectors.is_empty() {
            out.push(format!("{}: {} reads no series", c.origin, c.expr));
        }
        for s in selectors {
            match prometheus.query(&s) {
                Err(e) => out.push(format!("{}: selector {s} fails: {e}", c.origin)),
                Ok(r) if r.is_empty() => {
                    out.push(format!("{}: selector {s} matches no series", c.origin))
                }
                Ok(_) => {}
            }
        }
    }
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_dashboard_query_and_alert_expression_reads_series_the_scheduler_serves() {
    let checks = checks();
    let (api, client) = ApiServer::start_with_landscape("prometheus", "prom").await;
    create_seed(&client, "s-a", 20, &[]).await;
    create_seed(&client, "s-b", 20, &[]).await;
    // one shoot's binds are refused (422), so bind errors are served with their code
    let proxy = RefusingProxy::start(&api).await;
    let mut scheduler = Scheduler::start(
        &api,
        "prometheus",
        SchedulerOptions {
            leader_elect: true,
            kubeconfig: Some(proxy.kubeconfig.clone()),
            concurrent_syncs: 4,
            // one shoot's decision is slower than its budget, so the over-budget series exist
            // evacuation on and automatic, so every seed has its gardener_scheduler_seed_evacuation_*
            // series (the fail-back gauge and both move counters at 0)
            shoot_config: "decisionBudget: 100ms\n\
                           filters: [{name: TestSlow, args: {delayMs: 300, shoots: [garden-prom/slow]}}]\n\
                           evacuation: {enabled: true, checkPeriod: 1s, mode: automatic}\n",
            ..Default::default()
        },
    );
    // the job name the chart's alerts expect: what a ServiceMonitor of the chart scrapes as
    let objects = files::render(&[], &[]);
    let service = files::one(&objects, "Service", "-metrics");
    let job = service["metadata"]["name"].as_str().unwrap().to_string();
    let prometheus = Prometheus::start(&job, scheduler.metrics_port);
    prometheus.wait_ready().await;
    scheduler.wait_ready().await;

    let mut refused = shoot_manifest("prom", "refused");
    refused["metadata"]["labels"] = json!({ REFUSE_LABEL: "true" });
    raw_ns::<Shoot>(&client, "garden-prom")
        .create(
            &Default::default(),
            &serde_json::from_value(refused).unwrap(),
        )
        .await
        .unwrap();
    // decided before the seeds fill up: a full seed is turned away before the slow filter
    create_shoot(&client, "prom", "slow").await;
    futures::future::join_all((0..40).map(|i| {
        let client = client.clone();
        async move { create_shoot(&client, "prom", &format!("shoot-{i:02}")).await }
    }))
    .await;
    wait_bound(&client, "the 40 shoots to be bound", "prom", 40).await;
    // every seed is full now: one more fits none
    create_shoot(&client, "prom", "one-too-many").await;
    event_with_reason(
        &client,
        "the failure event of the shoot that fits nowhere",
        "prom",
        "one-too-many",
        "SchedulingFailed",
    )
    .await;

    eventually("the failure event of the shoot over its budget", || async {
        shoot_events(&client, "prom", "slow")
            .await
            .into_iter()
            .find(|e| e.note.as_deref().is_some_and(|m| m.contains("TestSlow")))
    })
    .await;

    // a few scrapes later, every query has its series
    let start = Instant::now();
    let mut left = problems(&prometheus, &checks);
    while !left.is_empty() && start.elapsed() < DEADLINE {
        tokio::time::sleep(Duration::from_secs(1)).await;
        left = problems(&prometheus, &checks);
    }
    assert!(
        left.is_empty(),
        "{} of {} queries read what the scheduler does not serve:\n{}\n\nscrape:\n{}",
        left.len(),
        checks.len(),
        left.join("\n"),
        scheduler.metrics()
    );
    // and Prometheus saw the burst as it happened
    let bound = prometheus
        .query(r#"sum(gardener_scheduler_schedule_attempts_total{result="scheduled"})"#)
        .unwrap();
    assert_eq!(bound[0]["value"][1], "40", "{bound:?}");
    let up = prometheus.query(&format!(r#"up{{job="{job}"}}"#)).unwrap();
    assert_eq!(up[0]["value"][1], "1", "{up:?}");
    drop(proxy);
}

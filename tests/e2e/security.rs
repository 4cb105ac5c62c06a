use std::process::Command;
use std::time::Duration;

use crate::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_credential_appears_in_the_logs_at_debug_level_but_the_kubeconfig_path_does() {
    let api = ApiServer::start("secrets");
    // the scheduler's token (the chart's ServiceAccount), and the administrator's
    let tokens = [
        token_of(api.scheduler_identity()),
        token_of(&api.kubeconfig),
    ];
    let client = api.client().await;
    base_landscape(&client, "sec").await;
    create_seed(&client, "s1", 10, &[]).await;
    // logLevel: debug with no RUST_LOG: every library logs at debug too
    let mut scheduler = Scheduler::start(
        &api,
        "secrets",
        SchedulerOptions {
            rust_log: None,
            ..Default::default()
        },
    );
    scheduler.wait_ready().await;
    create_shoot(&client, "sec", "first").await;
    seed_when_bound(&client, "the first shoot to be bound", "sec", "first").await;

    // an outage, so that connection errors and retries are logged as well
    let args = api.kill_apiserver();
    tokio::time::sleep(Duration::from_secs(2)).await;
    api.relaunch_apiserver(&args);
    let client = answering_client(&api).await;
    create_shoot(&client, "sec", "second").await;
    seed_when_bound(&client, "the second shoot to be bound", "sec", "second").await;
    let metrics = scheduler.metrics();
    assert!(scheduler.terminate().success());

    let logs = scheduler.logs();
    assert!(
        logs.lines().filter(|l| l.contains("DEBUG")).count() > 10,
        "debug logging was on:\n{logs}"
    );
    assert!(
        logs.contains("kube_client") || logs.contains("hyper") || logs.contains("rustls"),
        "library debug logs were on too:\n{logs}"
    );
    assert!(
        logs.contains("watch failed; retrying"),
        "the outage was logged"
    );
    let path = api.kubeconfig.display().to_string();
    assert!(
        logs.lines()
            .any(|l| l.contains("API client: kubeconfig") && l.contains(&path)),
        "the kubeconfig path is logged:\n{logs}"
    );
    for secret in [
        tokens[0].as_str(),
        tokens[1].as_str(),
        "Bearer",
        "authorization:",
        "Authorization:",
    ] {
        assert!(
            !logs.contains(secret),
            "{secret:?} appears in the logs:\n{}",
            logs.lines()
                .filter(|l| l.contains(secret))
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
    assert!(!tokens.iter().any(|t| metrics.contains(t.as_str())));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_health_and_metrics_servers_answer_nothing_but_health_and_metrics() {
    let (api, _client) = ApiServer::start_with_landscape("endpoints", "ep").await;
    let mut scheduler = Scheduler::start(&api, "endpoints", SchedulerOptions::default());
    scheduler.wait_ready().await;
    let (health, metrics) = (scheduler.health_port, scheduler.metrics_port);

    assert_eq!(http_get(health, "/healthz").map(|r| r.0), Some(200));
    assert_eq!(http_get(health, "/readyz").map(|r| r.0), Some(200));
    let (code, body) = http_get(metrics, "/metrics").unwrap();
    assert_eq!(code, 200);
    // the scheduler's own metrics, and the controller-runtime/client-go families upstream
    // serves (docs/operations/deployment.md), nothing else
    let compatible = [
        "controller_runtime_reconcile_total",
        "controller_runtime_reconcile_errors_total",
        "controller_runtime_reconcile_time_seconds_bucket",
        "controller_runtime_reconcile_time_seconds_sum",
        "controller_runtime_reconcile_time_seconds_count",
        "controller_runtime_max_concurrent_reconciles",
        "controller_runtime_active_workers",
        "workqueue_depth",
        "workqueue_adds_total",
        "workqueue_queue_duration_seconds_bucket",
        "workqueue_queue_duration_seconds_sum",
        "workqueue_queue_duration_seconds_count",
        "workqueue_work_duration_seconds_bucket",
        "workqueue_work_duration_seconds_sum",
        "workqueue_work_duration_seconds_count",
        "workqueue_retries_total",
        "workqueue_unfinished_work_seconds",
        "workqueue_longest_running_processor_seconds",
        "rest_client_requests_total",
    ];
    assert!(
        body.lines().all(|l| {
            let name = l.split(['{', ' ']).next().unwrap_or_default();
            l.starts_with('#')
                || name.starts_with("gardener_scheduler_")
                || compatible.contains(&name)
        }),
        "only the scheduler's own metrics and upstream's compatible ones:\n{body}"
    );

    let elsewhere = [
        "/",
        "/debug/pprof",
        "/debug/pprof/heap",
        "/debug/vars",
        "/config",
        "/configz",
        "/env",
        "/flags",
        "/version",
        "/metrics/",
        "/healthz/../metrics",
        "/%2e%2e/etc/passwd",
        "/readyz/verbose",
    ];
    for (port, own, other) in [
        (health, "health", "/metrics"),
        (metrics, "metrics", "/healthz"),
    ] {
        for path in elsewhere.iter().copied().chain([other]) {
            let got = http_get(port, path).map(|r| r.0);
            assert_eq!(got, Some(404), "GET {path} on the {own} server");
        }
    }
    for (port, path) in [
        (health, "/healthz"),
        (health, "/readyz"),
        (metrics, "/metrics"),
    ] {
        for method in ["POST", "PUT", "DELETE"] {
            let got = http_request(port, method, path).map(|r| r.0);
            assert_eq!(got, Some(405), "{method} {path}");
        }
    }
}

#[test]
fn a_broken_kubeconfig_is_reported_by_path_without_its_content() {
    let dir = std::env::temp_dir().join(format!("gs-kubeconfig-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let secret = "s3cr3t-token-value-0123456789";
    let cases = [
        (
            "unparsable",
            format!("apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user: {{token: {secret}\n"),
        ),
        (
            "wrong type",
            format!(
                "apiVersion: v1\nkind: Config\nusers:\n- name: u\n  user:\n    token: [{secret}]\n"
            ),
        ),
        (
            "undecodable certificate",
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: \"https://127.0.0.1:1\", certificate-authority-data: \"{secret}!\"}}\nusers:\n- name: u\n  user: {{token: {secret}}}\ncontexts:\n- name: x\n  context: {{cluster: c, user: u}}\ncurrent-context: x\n"
            ),
        ),
    ];
    let config = dir.join("config.yaml");
    let (health, mut metrics) = (free_port(), free_port());
    while metrics == health {
        metrics = free_port();
    }
    std::fs::write(
        &config,
        format!("leaderElection: {{leaderElect: false}}\nserver:\n  healthProbes: {{bindAddress: 127.0.0.1, port: {health}}}\n  metrics: {{bindAddress: 127.0.0.1, port: {metrics}}}\n"),
    )
    .unwrap();
    for (name, content) in cases {
        let kubeconfig = dir.join(format!("{}.kubeconfig", name.replace(' ', "-")));
        std::fs::write(&kubeconfig, content).unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_gardener-scheduler"))
            .arg("--config")
            .arg(&config)
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .env_remove("KUBECONFIG")
            .env("RUST_LOG", "trace")
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(!out.status.success(), "{name}: must fail:\n{text}");
        assert!(
            text.contains(&kubeconfig.display().to_string()),
            "{name}: names the file:\n{text}"
        );
        assert!(
            !text.contains(secret),
            "{name}: the content leaked:\n{text}"
        );
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

//! The container image run the way the chart's Deployment says, against Gardener's API with RBAC
//! (tests/garden/), and the way gardener-operator's Deployment says (rendered by Gardener's own
//! component).
//!
//! `make image-check` builds the image (`make image`) and runs these tests with its name in
//! `GARDENER_SCHEDULER_IMAGE`; they are ignored by a plain `cargo test`, which has no image. The
//! chart is rendered by `helm template`, and every container setting comes from the rendered
//! Deployment (tests/image/pod.rs): image, args, env, user and group, read-only root file system,
//! dropped capabilities, no privilege escalation, the ConfigMap volume at its mount path, the
//! memory limit, the probes and ports, and the grace period. What a kubelet and a cluster add is
//! provided as they would (tests/image/cluster.rs): the `kubernetes` Service's address and
//! environment, a serving certificate the pod verifies with the mounted CA, the service-account
//! token as a projected file, a network namespace per pod, probes from outside the pod with their
//! timeouts, and SIGTERM then SIGKILL after the grace period. The token is one of the chart's
//! ServiceAccount, bound to the roles the chart renders; kube-apiserver enforces them. Not
//! covered: image pulls, and scheduling of the pods onto nodes.

#[path = "../support/monitoring.rs"]
mod monitoring_files;
#[path = "../support/mod.rs"]
mod support;

mod cluster;
mod pod;

use std::collections::BTreeMap;
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_yaml_ng::Value;

use cluster::{Pod, PodFiles, ServiceAddress, podman};
use pod::PodRun;
use support::*;

/// The image under test, as `make image` tagged it.
fn image() -> String {
    std::env::var("GARDENER_SCHEDULER_IMAGE").unwrap_or_else(|_| {
        panic!("GARDENER_SCHEDULER_IMAGE is not set: run these tests with make image-check")
    })
}

/// The goal for the image's uncompressed size (docs/operations/image.md, "The image").
const MAX_IMAGE_BYTES: u64 = 40 * 1024 * 1024;

fn render(set: &[&str]) -> Vec<Value> {
    monitoring_files::render(&[], set)
}

/// The rendered pod, run with the image under test: the chart names `gardener-scheduler:<chart
/// appVersion>`, which `make image` builds.
fn pod_run(objects: &[Value]) -> PodRun {
    let run = pod::from_manifests(objects);
    let image = image();
    assert_eq!(
        run.image.rsplit('/').next(),
        image.rsplit('/').next(),
        "the chart's image is not the one make image builds"
    );
    PodRun { image, ..run }
}

/// Gardener's API (tests/garden/), its kube-apiserver reachable from pods at the Service IP with
/// a certificate they verify, RBAC on.
struct Cluster {
    api: ApiServer,
    port: u16,
    _service: ServiceAddress,
}

impl Cluster {
    /// Started without objects; every test applies example/dev (namespace garden included).
    async fn start(name: &str) -> Cluster {
        let service = ServiceAddress::add();
        let api = ApiServer::start_with(name, &[], &["--bind-address=0.0.0.0"]);
        let port = api
            .url()
            .rsplit(':')
            .next()
            .and_then(|p| p.parse().ok())
            .expect("kube-apiserver's port in its URL");
        Cluster {
            api,
            port,
            _service: service,
        }
    }

    /// The files of a pod that is wired up correctly: volumes as rendered, the token of the
    /// chart's ServiceAccount (bound to the chart's default roles), the CA.
    fn files(&self, run: &PodRun) -> PodFiles {
        let token = token_of(self.api.scheduler_identity());
        PodFiles {
            volumes: run
                .mounts
                .iter()
                .map(|m| (m.volume.clone(), m.files.clone()))
                .collect(),
            token_dir: self.token_dir(run, Some(&token)),
            service_port: self.port,
            file_mode: 0o644,
        }
    }

    fn token_dir(&self, run: &PodRun, token: Option<&str>) -> BTreeMap<String, String> {
        let mut files = BTreeMap::from([
            (
                "ca.crt".to_string(),
                std::fs::read_to_string(self.api.ca_file()).unwrap(),
            ),
            ("namespace".to_string(), run.namespace.clone()),
        ]);
        if let Some(token) = token {
            files.insert("token".into(), token.into());
        }
        files
    }
}

/// Waits until `pod` passes `probe` as the kubelet checks it: not before the initial delay, each
/// check within the probe's timeout (checked every second rather than every period, to be quick).
async fn wait_probe(pod: &Pod, probe: &pod::Probe, what: &str) {
    let delay = Duration::from_secs(probe.initial_delay).saturating_sub(pod.since_start());
    tokio::time::sleep(delay).await;
    let start = Instant::now();
    loop {
        if let Some((status, _)) = pod.probe(probe)
            && (200..400).contains(&status)
        {
            return;
        }
        assert!(
            pod.state().0,
            "{what}: the container exited:\n{}",
            pod.logs()
        );
        assert!(
            start.elapsed() < DEADLINE,
            "{what}: {} did not pass within {DEADLINE:?} (last: {:?})\n{}",
            probe.path,
            pod.probe(probe),
            pod.logs()
        );
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
}

/// Every shoot of the dev landscape bound, each exactly once: its generation went up by one (the
/// binding's one change of spec), never more.
async fn wait_bound_once(
    client: &kube::Client,
    count: usize,
) -> Vec<gardener_scheduler::api::Shoot> {
    let shoots = eventually("every example shoot to be bound", || async {
        let shoots = list_shoots(client, "local").await;
        (shoots.len() == count && shoots.iter().all(|s| seed_of(s).is_some())).then_some(shoots)
    })
    .await;
    for s in &shoots {
        assert_eq!(
            s.metadata.generation,
            Some(2),
            "{:?} was bound more than once (or changed otherwise)",
            s.metadata.name
        );
    }
    shoots
}

fn lease_holder(
    objects: &[Value],
) -> impl Fn(&kube::Client) -> futures::future::BoxFuture<'static, Option<String>> {
    let config = pod::one(objects, "ConfigMap")["data"]["schedulerconfiguration.yaml"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_default();
    let config: Value = serde_yaml_ng::from_str(&config).expect("the rendered configuration");
    let namespace = config["leaderElection"]["resourceNamespace"]
        .as_str()
        .unwrap()
        .to_string();
    let name = config["leaderElection"]["resourceName"]
        .as_str()
        .unwrap()
        .to_string();
    move |client: &kube::Client| {
        let leases: kube::Api<k8s_openapi::api::coordination::v1::Lease> =
            kube::Api::namespaced(client.clone(), &namespace);
        let name = name.clone();
        Box::pin(async move {
            leases
                .get_opt(&name)
                .await
                .ok()
                .flatten()
                .and_then(|l| l.spec?.holder_identity)
                .filter(|h| !h.is_empty())
        })
    }
}

#[test]
#[ignore = "needs the image: make image-check"]
fn the_image_is_small_non_root_and_has_no_shell() {
    let image = image();
    let out = podman()
        .args(["image", "inspect", &image])
        .output()
        .expect("podman image inspect");
    assert_success(&out);
    let inspect: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    let inspect = &inspect[0];
    let size = inspect["Size"].as_u64().unwrap();
    assert!(
        size <= MAX_IMAGE_BYTES,
        "the image is {size} bytes uncompressed, more than {MAX_IMAGE_BYTES}"
    );
    let config = &inspect["Config"];
    assert_eq!(config["User"], "65532:65532");
    assert_eq!(
        config["Entrypoint"],
        serde_json::json!(["/gardener-scheduler"])
    );
    assert!(
        config["Env"]
            .as_array()
            .unwrap()
            .iter()
            .any(|e| e == "MALLOC_ARENA_MAX=1"),
        "{:?}",
        config["Env"]
    );
    let run = pod_run(&render(&[]));
    assert_eq!(
        format!("{}:{}", run.user, run.group),
        "65532:65532",
        "the chart runs the pod as the image's user"
    );
    assert!(run.run_as_non_root && run.user != 0);

    // nothing to exec into: the runtime holds the binary and the C libraries only
    for shell in ["/bin/sh", "/bin/bash", "/usr/bin/sh"] {
        let out = podman()
            .args([
                "run",
                "--rm",
                "--pull=never",
                "--network=none",
                "--entrypoint",
                shell,
            ])
            .args([
                "--ulimit",
                "nofile=1024:1024",
                "--ulimit",
                "nproc=1024:1024",
            ])
            .arg(&image)
            .args(["-c", "true"])
            .output()
            .unwrap();
        assert!(!out.status.success(), "{shell} runs in the image");
    }
    // the binary inside answers, as the user the chart runs it as, on a read-only root
    let out = podman()
        .args([
            "run",
            "--rm",
            "--pull=never",
            "--network=none",
            "--read-only",
            "--read-only-tmpfs=false",
        ])
        .args(["--cap-drop=ALL", "--user=65532:65532"])
        .args([
            "--ulimit",
            "nofile=1024:1024",
            "--ulimit",
            "nproc=1024:1024",
        ])
        .arg(&image)
        .arg("--version")
        .output()
        .unwrap();
    assert_success(&out);
    assert!(String::from_utf8_lossy(&out.stdout).contains(env!("CARGO_PKG_VERSION")));
}

/// A real Prometheus scraping the pod as the chart's ServiceMonitor and Service say: the
/// Service's `metrics` port resolved to the container port, the endpoint's path, scheme, interval
/// and timeout, the job named after the Service (prometheus-operator's default).
struct Prometheus {
    child: Child,
    port: u16,
    dir: PathBuf,
}

impl Prometheus {
    fn scraping(objects: &[Value], run: &PodRun, pod_ip: &str) -> Prometheus {
        let monitor = pod::one(objects, "ServiceMonitor");
        let service = pod::one(objects, "Service");
        let endpoints = monitor["spec"]["endpoints"].as_sequence().unwrap();
        assert_eq!(endpoints.len(), 1);
        let endpoint = &endpoints[0];
        let service_port = service["spec"]["ports"]
            .as_sequence()
            .unwrap()
            .iter()
            .find(|p| p["name"] == endpoint["port"])
            .expect("the ServiceMonitor's port is a port of the Service");
        let target_port = match &service_port["targetPort"] {
            Value::String(name) => run.ports[name],
            Value::Number(n) => n.as_u64().unwrap() as u16,
            other => panic!("targetPort {other:?}"),
        };
        for (key, value) in service["spec"]["selector"].as_mapping().unwrap() {
            assert_eq!(
                pod::one(objects, "Deployment")["spec"]["template"]["metadata"]["labels"]
                    [key.as_str().unwrap()],
                *value,
                "the Service selects the pods by {key:?}"
            );
        }
        assert!(endpoint["relabelings"].is_null());
        // metricRelabelings as prometheus-operator writes them into the scrape configuration
        let relabel: String = endpoint["metricRelabelings"]
            .as_sequence()
            .cloned()
            .unwrap_or_default()
            .iter()
            .map(|r| {
                let labels: Vec<&str> = r["sourceLabels"]
                    .as_sequence()
                    .unwrap()
                    .iter()
                    .map(|l| l.as_str().unwrap())
                    .collect();
                format!(
                    "      - action: {}\n        regex: '{}'\n        source_labels: [{}]\n",
                    r["action"].as_str().unwrap(),
                    r["regex"].as_str().unwrap(),
                    labels.join(", ")
                )
            })
            .collect();
        let relabel = if relabel.is_empty() {
            relabel
        } else {
            format!("    metric_relabel_configs:\n{relabel}")
        };
        let job = service["metadata"]["name"].as_str().unwrap();
        let dir = cluster::scratch("prometheus");
        std::fs::create_dir_all(dir.join("data")).unwrap();
        let config = dir.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "scrape_configs:\n  - job_name: {job}\n    metrics_path: {}\n    scheme: {}\n    \
                 scrape_interval: {}\n    scrape_timeout: {}\n    static_configs:\n      - targets: ['{pod_ip}:{target_port}']\n{relabel}",
                // prometheus-operator's defaults where the endpoint says nothing; the interval
                // is 1 s rather than the Prometheus's global one, to be quick
                endpoint["path"].as_str().unwrap_or("/metrics"),
                endpoint["scheme"].as_str().unwrap_or("http"),
                endpoint["interval"].as_str().unwrap_or("1s"),
                endpoint["scrapeTimeout"].as_str().unwrap_or("1s"),
            ),
        )
        .unwrap();
        let port = free_port();
        let log = std::fs::File::create(dir.join("prometheus.log")).unwrap();
        let child = Command::new(monitoring_files::prometheus_tool("prometheus"))
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("starting prometheus");
        Prometheus { child, port, dir }
    }

    fn value(&self, expr: &str) -> Option<f64> {
        let query: String = expr
            .bytes()
            .map(|b| match b {
                b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'_' => (b as char).to_string(),
                _ => format!("%{b:02X}"),
            })
            .collect();
        let (_, body) = http_get(self.port, &format!("/api/v1/query?query={query}"))?;
        let answer: serde_json::Value = serde_json::from_str(&body).ok()?;
        answer["data"]["result"][0]["value"][1]
            .as_str()?
            .parse()
            .ok()
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the image: make image-check"]
async fn one_replica_binds_is_probed_scraped_and_stops_within_its_grace_period() {
    let objects = render(&[]);
    let run = pod_run(&objects);
    // the ServiceMonitor, scraping every second; it changes nothing in the pod
    let monitored = render(&[
        "serviceMonitor.enabled=true",
        "serviceMonitor.interval=1s",
        "serviceMonitor.scrapeTimeout=1s",
    ]);
    assert_eq!(
        pod::one(&monitored, "Deployment"),
        pod::one(&objects, "Deployment")
    );

    let cluster = Cluster::start("image-one").await;
    let client = cluster.api.client().await;
    apply_example_dev(&client).await;
    let pod = Pod::start("gardener-scheduler-0", 1, &run, &cluster.files(&run));

    wait_probe(&pod, &run.readiness, "readiness").await;
    wait_probe(&pod, &run.liveness, "liveness").await;
    let shoots = wait_bound_once(&client, 4).await;
    assert!(
        shoots
            .iter()
            .all(|s| seed_of(s).unwrap().starts_with("local-"))
    );

    let inspect = pod.inspect();
    let host = &inspect["HostConfig"];
    assert_eq!(host["ReadonlyRootfs"], true);
    assert_eq!(inspect["Config"]["User"], "65532:65532");
    assert!(
        host["CapDrop"].as_array().is_some_and(|d| d.len() > 10),
        "{:?}",
        host["CapDrop"]
    );

    let prometheus = Prometheus::scraping(&monitored, &run, &pod.net.pod_ip);
    let service = pod::one(&monitored, "Service")["metadata"]["name"]
        .as_str()
        .unwrap()
        .to_string();
    eventually("Prometheus to scrape the scheduled shoots", || async {
        let up = prometheus.value(&format!("up{{job=\"{service}\"}}"));
        let scheduled = prometheus
            .value("sum(gardener_scheduler_schedule_attempts_total{result=\"scheduled\"})");
        (up == Some(1.0) && scheduled == Some(4.0)).then_some(())
    })
    .await;

    let (took, code) = pod.stop();
    eprintln!("stopped in {took:?} with exit code {code}");
    assert_eq!(
        code,
        0,
        "the scheduler did not exit cleanly on SIGTERM:\n{}",
        pod.logs()
    );
    assert!(
        took < Duration::from_secs(run.grace_seconds),
        "SIGKILL after the grace period"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the image: make image-check"]
async fn with_two_replicas_the_standby_takes_over_when_the_leader_stops() {
    let objects = render(&["replicaCount=2"]);
    let run = pod_run(&objects);
    let holder = lease_holder(&objects);
    let cluster = Cluster::start("image-two").await;
    let client = cluster.api.client().await;
    apply_example_dev(&client).await;
    let files = cluster.files(&run);
    let pods = [
        Pod::start("gardener-scheduler-a", 2, &run, &files),
        Pod::start("gardener-scheduler-b", 3, &run, &files),
    ];
    for pod in &pods {
        wait_probe(pod, &run.readiness, "readiness").await;
    }
    wait_bound_once(&client, 4).await;
    let leader = eventually("one replica to hold the Lease", || async {
        let h = holder(&client).await?;
        pods.iter().position(|p| h.starts_with(&p.name))
    })
    .await;
    let standby = 1 - leader;

    let (took, code) = pods[leader].stop();
    eprintln!("leader stopped in {took:?} with exit code {code}");
    assert_eq!(code, 0, "{}", pods[leader].logs());
    assert!(took < Duration::from_secs(run.grace_seconds));

    create_shoot(&client, "local", "epsilon").await;
    eventually("the standby to take the Lease", || async {
        holder(&client)
            .await
            .filter(|h| h.starts_with(&pods[standby].name))
    })
    .await;
    wait_bound_once(&client, 5).await;

    let (took, code) = pods[standby].stop();
    eprintln!("new leader stopped in {took:?} with exit code {code}");
    assert_eq!(code, 0, "{}", pods[standby].logs());
    assert!(took < Duration::from_secs(run.grace_seconds));
}

/// Runs a pod whose process must exit, and returns its exit code and logs.
async fn exit_of(pod: &Pod) -> (i32, String) {
    let code = eventually("the container to exit", || async { pod.state().1 }).await;
    (code, pod.logs())
}

/// The lines of a log that report an error.
fn error_lines(logs: &str) -> Vec<&str> {
    logs.lines()
        .filter(|l| l.contains("\"level\":\"ERROR\"") || l.starts_with("error"))
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the image: make image-check"]
async fn a_missing_or_unreadable_config_or_a_typo_in_it_is_one_clear_error_and_an_exit() {
    let objects = render(&[]);
    let run = pod_run(&objects);
    let config_arg = run
        .args
        .iter()
        .find_map(|a| a.strip_prefix("--config="))
        .expect("the container is given --config")
        .to_string();
    let cluster = Cluster::start("image-config").await;
    let client = cluster.api.client().await;
    apply_example_dev(&client).await;

    // the ConfigMap volume holds no configuration file (a wrong key, an empty ConfigMap)
    let mut files = cluster.files(&run);
    for volume in files.volumes.values_mut() {
        volume.clear();
    }
    let pod = Pod::start("gardener-scheduler-noconfig", 4, &run, &files);
    let (code, logs) = exit_of(&pod).await;
    assert_eq!(code, 2, "{logs}");
    let errors = error_lines(&logs);
    assert!(
        !errors.is_empty() && errors.len() <= 2 && errors.iter().all(|l| l.contains(&config_arg)),
        "one error naming {config_arg}:\n{logs}"
    );
    drop(pod);

    // a file the pod's user may not read (a defaultMode of 0600: owner root)
    let mut files = cluster.files(&run);
    files.file_mode = 0o600;
    let pod = Pod::start("gardener-scheduler-unreadable", 4, &run, &files);
    let (code, logs) = exit_of(&pod).await;
    assert_eq!(code, 2, "{logs}");
    let errors = error_lines(&logs);
    assert!(
        !errors.is_empty()
            && errors.len() <= 2
            && errors
                .iter()
                .all(|l| l.contains(&config_arg) && l.contains("ermission denied")),
        "one error naming {config_arg} and the denied read:\n{logs}"
    );
    drop(pod);

    // a typo in a value
    let mut files = cluster.files(&run);
    let mut replaced = false;
    for volume in files.volumes.values_mut() {
        for content in volume.values_mut() {
            if content.contains("candidateDeterminationStrategy: SameRegion") {
                *content = content.replace(
                    "candidateDeterminationStrategy: SameRegion",
                    "candidateDeterminationStrategy: SameRegoin",
                );
                replaced = true;
            }
        }
    }
    assert!(
        replaced,
        "the rendered configuration sets candidateDeterminationStrategy"
    );
    let pod = Pod::start("gardener-scheduler-typo", 4, &run, &files);
    let (code, logs) = exit_of(&pod).await;
    assert_eq!(code, 2, "{logs}");
    assert!(
        logs.contains("schedulers.shoot.candidateDeterminationStrategy")
            && logs.contains("SameRegoin"),
        "the error names the field and the value:\n{logs}"
    );
    // nothing was bound by either
    assert!(
        list_shoots(&client, "local")
            .await
            .iter()
            .all(|s| seed_of(s).is_none())
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the image: make image-check"]
async fn a_missing_token_is_one_clear_error_and_the_restarted_pod_runs() {
    let objects = render(&[]);
    let run = pod_run(&objects);
    let cluster = Cluster::start("image-token").await;
    let client = cluster.api.client().await;
    apply_example_dev(&client).await;
    let mut files = cluster.files(&run);
    files.token_dir = cluster.token_dir(&run, None);
    let pod = Pod::start("gardener-scheduler-notoken", 5, &run, &files);
    // as the upstream scheduler with client-go: no client without a token; the kubelet
    // restarts the container with its backoff, and the log says why
    let (code, logs) = exit_of(&pod).await;
    assert_ne!(code, 0, "{logs}");
    assert_ne!(code, 101, "a panic:\n{logs}");
    let errors = error_lines(&logs);
    let token = format!("{}/token", cluster::TOKEN_DIR);
    assert!(
        !errors.is_empty() && errors.len() <= 2 && errors.iter().all(|l| l.contains(&token)),
        "one error naming {token}:\n{logs}"
    );
    assert!(
        list_shoots(&client, "local")
            .await
            .iter()
            .all(|s| seed_of(s).is_none())
    );
    drop(pod);

    // the restarted container, with the token the kubelet has written meanwhile
    let pod = Pod::start("gardener-scheduler-token", 5, &run, &cluster.files(&run));
    wait_probe(&pod, &run.readiness, "readiness with the token").await;
    wait_bound_once(&client, 4).await;
}

/// Forwards TCP connections from the Service IP's `from` port to the API server, once started.
fn forward(from: &TcpListener, to: u16) {
    let listener = from.try_clone().unwrap();
    std::thread::spawn(move || {
        for client in listener.incoming().flatten() {
            let Ok(server) = std::net::TcpStream::connect(("127.0.0.1", to)) else {
                continue;
            };
            for (mut a, mut b) in [
                (client.try_clone().unwrap(), server.try_clone().unwrap()),
                (server, client),
            ] {
                std::thread::spawn(move || {
                    let _ = std::io::copy(&mut a, &mut b);
                    let _ = b.shutdown(std::net::Shutdown::Write);
                });
            }
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the image: make image-check"]
async fn an_api_server_unreachable_at_start_is_waited_for_without_a_crash() {
    let objects = render(&[]);
    let run = pod_run(&objects);
    let cluster = Cluster::start("image-unreachable").await;
    let client = cluster.api.client().await;
    apply_example_dev(&client).await;
    // a Service port where nothing answers yet
    let port = free_port();
    let mut files = cluster.files(&run);
    files.service_port = port;
    let pod = Pod::start("gardener-scheduler-unreachable", 6, &run, &files);

    wait_probe(
        &pod,
        &run.liveness,
        "liveness while the API server is unreachable",
    )
    .await;
    // the address once, the cause in each feed's warning
    let address = format!("https://{}:{port}", cluster::SERVICE_IP);
    eventually("the unreachable API server to be reported", || async {
        let logs = pod.logs();
        (logs.contains(&address) && logs.contains("Connection refused")).then_some(())
    })
    .await;
    // a minute without a server: still running, not ready, and one warning per feed, not one
    // per try
    tokio::time::sleep(Duration::from_secs(60)).await;
    let logs = pod.logs();
    let (running, _) = pod.state();
    assert!(
        running,
        "the process exited while the API server was unreachable:\n{logs}"
    );
    let ready = pod.probe(&run.readiness);
    assert!(ready.as_ref().is_some_and(|(s, _)| *s >= 400), "{ready:?}");
    let warnings: Vec<&str> = logs
        .lines()
        .filter(|l| l.contains("watch failed"))
        .collect();
    let feeds = warnings
        .iter()
        .filter_map(|l| l.split("\"kind\":\"").nth(1)?.split('"').next())
        .collect::<std::collections::BTreeSet<_>>();
    assert!(
        !feeds.is_empty() && warnings.len() == feeds.len(),
        "one warning per feed ({feeds:?}), got {}:\n{logs}",
        warnings.len()
    );

    let listener = TcpListener::bind((cluster::SERVICE_IP, port)).unwrap();
    forward(&listener, cluster.port);
    wait_probe(
        &pod,
        &run.readiness,
        "readiness once the API server answers",
    )
    .await;
    wait_bound_once(&client, 4).await;
    assert_eq!(pod.inspect()["RestartCount"].as_u64().unwrap_or(0), 0);
}

/// The objects gardener-operator deploys for the scheduler, rendered by Gardener's own component
/// (tests/garden/gardener/render-scheduler, `pkg/component/gardener/scheduler` at the pinned
/// release) with the image under test, and completed as a garden completes them:
/// - the virtual garden's ClusterRole and ClusterRoleBinding applied, the ServiceAccount the
///   access Secret names created, and a token of it written into that Secret (what
///   gardener-resource-manager's token requestor does);
/// - the generic token kubeconfig (gardener-operator's secrets manager writes it): the CA and
///   the token file of the projected volume; the server is the `kubernetes` Service's address
///   here, where a garden names `virtual-garden-kube-apiserver`.
fn rendered_by_operator(cluster: &Cluster) -> Vec<Value> {
    let out = Command::new(garden_bin().join("render-scheduler"))
        .args(["-image", &image(), "-namespace", "garden"])
        .output()
        .expect("running render-scheduler");
    assert!(
        out.status.success(),
        "render-scheduler: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut objects: Vec<Value> = serde_yaml_ng::Deserializer::from_slice(&out.stdout)
        .map(|doc| serde::Deserialize::deserialize(doc).unwrap())
        .filter(|v: &Value| !v.is_null())
        .collect();
    let rbac: Vec<serde_json::Value> = objects
        .iter()
        .filter(|o| o["kind"] == "ClusterRole" || o["kind"] == "ClusterRoleBinding")
        .map(|o| serde_json::to_value(o).unwrap())
        .collect();
    assert_eq!(
        rbac.len(),
        2,
        "the virtual garden's ClusterRole and binding"
    );
    let access = objects
        .iter()
        .find(|o| o["kind"] == "Secret" && !o["metadata"]["annotations"].is_null())
        .expect("the access Secret");
    let annotations = &access["metadata"]["annotations"];
    let account = annotations["serviceaccount.resources.gardener.cloud/name"]
        .as_str()
        .unwrap()
        .to_string();
    let account_ns = annotations["serviceaccount.resources.gardener.cloud/namespace"]
        .as_str()
        .unwrap()
        .to_string();
    let api = &cluster.api;
    let file = api.state.join("operator-rbac.json");
    let mut items = rbac;
    items.push(
        serde_json::json!({"apiVersion": "v1", "kind": "ServiceAccount",
                                  "metadata": {"name": account, "namespace": account_ns}}),
    );
    write_json(
        &file,
        &serde_json::json!({"apiVersion": "v1", "kind": "List", "items": items}),
    );
    api.kubectl(&["apply", "-f", &file.display().to_string()]);
    let token = api.kubectl(&[
        "create",
        "token",
        &account,
        "-n",
        &account_ns,
        "--duration",
        "48h",
    ]);
    let ca = std::fs::read_to_string(api.ca_file()).unwrap();
    let kubeconfig = format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: garden\n  cluster:\n    server: https://{}:{}\n    certificate-authority-data: {}\nusers:\n- name: gardener\n  user:\n    tokenFile: /var/run/secrets/gardener.cloud/shoot/generic-kubeconfig/token\ncontexts:\n- name: garden\n  context: {{cluster: garden, user: gardener}}\ncurrent-context: garden\n",
        cluster::SERVICE_IP,
        cluster.port,
        {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.encode(ca)
        }
    );
    for object in objects.iter_mut().filter(|o| o["kind"] == "Secret") {
        let data = if object["metadata"]["annotations"].is_null() {
            ("kubeconfig", kubeconfig.clone())
        } else {
            ("token", token.trim().to_string())
        };
        object["stringData"] = serde_yaml_ng::to_value(BTreeMap::from([data])).unwrap();
    }
    objects
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs the image: make image-check"]
async fn as_gardener_operator_deploys_it_the_image_binds_passes_its_probes_and_is_scraped() {
    let cluster = Cluster::start("image-operator").await;
    let objects = rendered_by_operator(&cluster);
    let run = pod_run(&objects);
    assert_eq!(
        run.args,
        ["--config=/etc/gardener-scheduler/config/schedulerconfiguration.yaml"]
    );
    assert!(
        !run.service_account_token,
        "the operator mounts its own token"
    );
    let client = cluster.api.client().await;
    apply_example_dev(&client).await;
    let files = PodFiles {
        volumes: run
            .mounts
            .iter()
            .map(|m| (m.volume.clone(), m.files.clone()))
            .collect(),
        token_dir: BTreeMap::new(),
        service_port: cluster.port,
        file_mode: 0o644,
    };
    let pod = Pod::start("gardener-scheduler-operator", 7, &run, &files);
    wait_probe(&pod, &run.readiness, "readiness").await;
    wait_probe(&pod, &run.liveness, "liveness").await;
    wait_bound_once(&client, 4).await;
    // the Lease where the operator's configuration puts it
    let holder = lease_holder(&objects)(&client).await;
    assert!(
        holder.is_some_and(|h| h.starts_with("gardener-scheduler-operator")),
        "{}",
        pod.logs()
    );
    // scraped as the operator's ServiceMonitor says, which keeps only upstream's metric families
    let prometheus = Prometheus::scraping(&objects, &run, &pod.net.pod_ip);
    eventually(
        "Prometheus to scrape upstream's metric of the reconciles",
        || async {
            let up = prometheus.value("up{job=\"gardener-scheduler\"}");
            let reconciled = prometheus.value(
                "sum(controller_runtime_reconcile_total{controller=\"shoot\",result=\"success\"})",
            );
            (up == Some(1.0) && reconciled.is_some_and(|n| n >= 4.0)).then_some(())
        },
    )
    .await;
    assert_eq!(
        prometheus.value("count(gardener_scheduler_schedule_attempts_total)"),
        None,
        "the operator's ServiceMonitor drops the scheduler's own families"
    );
    let (_, code) = pod.stop();
    assert_eq!(code, 0, "{}", pod.logs());
}

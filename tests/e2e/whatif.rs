//! `simulate --kubeconfig`: the landscape read from a real API server (through a recording
//! proxy that can also forbid a kind), overlays, `--replay`, `--compare`, and the errors of an
//! unreachable cluster, a forbidden list and a malformed overlay; `simulate --live` and the live
//! `plan drain` as the docs show them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Arc, Mutex};

use axum::body::Body as AxumBody;
use axum::extract::{Request, State};
use axum::response::Response;
use serde_json::{Value, json};

use crate::support::*;

/// A plain-HTTP proxy in front of the API server that records every request (method, path
/// and query) and answers 403 to requests whose path contains `forbid`.
pub(crate) struct RecordingProxy {
    pub(crate) kubeconfig: PathBuf,
    requests: Arc<Mutex<Vec<(String, String)>>>,
    task: tokio::task::JoinHandle<()>,
}

#[derive(Clone)]
struct Forward {
    client: kube::Client,
    forbid: Option<&'static str>,
    requests: Arc<Mutex<Vec<(String, String)>>>,
}

impl RecordingProxy {
    pub(crate) async fn start(
        api: &ApiServer,
        name: &str,
        forbid: Option<&'static str>,
    ) -> RecordingProxy {
        let forward = Forward {
            client: api.passthrough_client().await,
            forbid,
            requests: Arc::default(),
        };
        let requests = forward.requests.clone();
        let app = axum::Router::new().fallback(handle).with_state(forward);
        let (port, task) = crate::support::proxy::serve_locally(app).await;
        let kubeconfig = api.state.join(format!("kubeconfig-{name}"));
        std::fs::write(
            &kubeconfig,
            kubeconfig_for(
                &format!("http://127.0.0.1:{port}"),
                &token_of(&api.what_if_identity()),
            ),
        )
        .unwrap();
        RecordingProxy {
            kubeconfig,
            requests,
            task,
        }
    }

    pub(crate) fn requests(&self) -> Vec<(String, String)> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for RecordingProxy {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A kubeconfig for a plain-HTTP test proxy at `server`, sending `token`.
pub(crate) fn kubeconfig_for(server: &str, token: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {{server: \"{server}\"}}\nusers:\n- name: u\n  user: {{token: {token}}}\ncontexts:\n- name: c\n  context: {{cluster: c, user: u}}\ncurrent-context: c\n"
    )
}

async fn handle(State(fw): State<Forward>, req: Request) -> Response {
    let (parts, body) = req.into_parts();
    let bytes = crate::support::proxy::body_bytes(body).await;
    let uri = parts
        .uri
        .path_and_query()
        .map(|p| p.as_str().to_string())
        .unwrap_or_default();
    fw.requests
        .lock()
        .unwrap()
        .push((parts.method.to_string(), uri.clone()));
    if fw.forbid.is_some_and(|f| parts.uri.path().contains(f)) {
        let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
            "reason": "Forbidden", "code": 403,
            "message": format!("user \"reader\" cannot list resource at {}", parts.uri.path())});
        return Response::builder()
            .status(403)
            .header("content-type", "application/json")
            .body(AxumBody::from(serde_json::to_vec(&status).unwrap()))
            .unwrap();
    }
    let mut out = http::Request::builder().method(parts.method).uri(uri);
    for (k, v) in &parts.headers {
        // the sender's token goes on: RBAC judges the reader
        if !["host", "connection"].contains(&k.as_str()) {
            out = out.header(k, v);
        }
    }
    let out = out.body(kube::client::Body::from(bytes.to_vec())).unwrap();
    match fw.client.send(out).await {
        Ok(resp) => {
            let (parts, body) = resp.into_parts();
            let mut r = Response::builder().status(parts.status);
            for (k, v) in &parts.headers {
                if !["connection", "transfer-encoding"].contains(&k.as_str()) {
                    r = r.header(k, v);
                }
            }
            r.body(AxumBody::new(body)).unwrap()
        }
        Err(e) => Response::builder()
            .status(502)
            .body(AxumBody::from(e.to_string()))
            .unwrap(),
    }
}

/// Runs the binary with `args` off the async runtime's threads.
pub(crate) async fn run_cli(args: Vec<String>) -> Output {
    tokio::task::spawn_blocking(move || {
        Command::new(env!("CARGO_BIN_EXE_gardener-scheduler"))
            .args(&args)
            .env_remove("KUBECONFIG")
            .output()
            .unwrap()
    })
    .await
    .unwrap()
}

/// Runs `simulate` off the async runtime's threads.
async fn simulate(mut args: Vec<String>) -> Output {
    args.insert(0, "simulate".into());
    run_cli(args).await
}

fn args(kubeconfig: &Path, rest: &[&str]) -> Vec<String> {
    let mut v = vec![
        "--kubeconfig".to_string(),
        kubeconfig.display().to_string(),
        "--now".into(),
        "2026-01-01T00:00:00Z".into(),
    ];
    v.extend(rest.iter().map(|s| s.to_string()));
    v
}

/// The JSON a successful run printed.
pub(crate) fn json_out(out: &Output) -> Value {
    assert!(
        out.status.success(),
        "the command failed ({}):\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}):\n{}",
            String::from_utf8_lossy(&out.stdout)
        )
    })
}

/// shoot -> seed (or "-") of `-o json` decisions.
fn decisions(v: &Value) -> Vec<(String, String)> {
    elements(v, "decisions")
        .map(|d| {
            (
                string(d, "shoot"),
                d["seed"].as_str().unwrap_or("-").to_string(),
            )
        })
        .collect()
}

async fn landscape(client: &kube::Client) {
    base_landscape(client, "wi").await;
    create_seed(client, "s1", 10, &[]).await;
    create_seed(client, "s2", 10, &[]).await;
    create_bound_shoot(client, "wi", "bound-a", "s1").await;
    create_bound_shoot(client, "wi", "bound-b", "s1").await;
    for name in ["p1", "p2", "p3"] {
        create_shoot(client, "wi", name).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_landscape_is_read_in_pages_decided_overlaid_replayed_and_compared() {
    let api = ApiServer::start("whatif");
    let client = api.client().await;
    landscape(&client).await;
    let proxy = RecordingProxy::start(&api, "whatif", None).await;

    // only the live read: the cluster's pending shoots, nothing else
    let out = simulate(args(
        &proxy.kubeconfig,
        &["-o", "json", "--chunk-size", "2"],
    ))
    .await;
    let v = json_out(&out);
    let got = decisions(&v);
    let shoots: Vec<&str> = got.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(shoots, ["garden-wi/p1", "garden-wi/p2", "garden-wi/p3"]);
    assert!(got.iter().all(|(_, seed)| seed == "s1" || seed == "s2"));
    // two bound shoots on s1: the spread sends the first pending one to s2
    assert_eq!(got[0].1, "s2", "{got:?}");
    let requests = proxy.requests();
    assert!(
        requests.iter().all(|(m, _)| m == "GET"),
        "read-only: {requests:?}"
    );
    let shoot_lists: Vec<&String> = requests
        .iter()
        .map(|(_, u)| u)
        .filter(|u| u.contains("/shoots?"))
        .collect();
    assert_eq!(
        shoot_lists.len(),
        3,
        "5 shoots in pages of 2: {shoot_lists:?}"
    );
    assert!(shoot_lists.iter().all(|u| u.contains("limit=2")));
    assert_eq!(
        shoot_lists
            .iter()
            .filter(|u| u.contains("continue="))
            .count(),
        2
    );
    // one list per kind otherwise: 2 seeds and 1 CloudProfile fit one page each
    assert_eq!(
        requests
            .iter()
            .filter(|(_, u)| u.contains("/seeds?"))
            .count(),
        1,
        "2 seeds in a page of 2: the API server says no more follow: {requests:?}"
    );

    // -o yaml: the cluster's shoots as read, each decided one with spec.seedName set
    let out = simulate(args(&proxy.kubeconfig, &["-o", "yaml"])).await;
    assert!(out.status.success());
    let docs: Vec<Value> = serde_yaml_ng::Deserializer::from_slice(&out.stdout)
        .map(|d| serde::Deserialize::deserialize(d).unwrap())
        .filter(|v: &Value| !v.is_null())
        .collect();
    let pending: Vec<&Value> = docs
        .iter()
        .filter(|d| d["metadata"]["name"].as_str().unwrap().starts_with('p'))
        .collect();
    assert_eq!(pending.len(), 3, "{docs:#?}");
    for d in pending {
        assert_eq!(d["kind"], "Shoot");
        assert_eq!(d["apiVersion"], "core.gardener.cloud/v1beta1");
        assert!(d["spec"]["seedName"].is_string(), "{d:#}");
    }

    // an overlay: s2 tainted (replaces the cluster's s2), and a new shoot
    let dir = api.state.join("overlay");
    std::fs::create_dir_all(&dir).unwrap();
    let mut seed2: Value = serde_json::to_value(
        kube::Api::<gardener_scheduler::api::Seed>::all(client.clone())
            .get("s2")
            .await
            .unwrap(),
    )
    .unwrap();
    seed2["apiVersion"] = json!("core.gardener.cloud/v1beta1");
    seed2["kind"] = json!("Seed");
    seed2["spec"]["taints"] = json!([{"key": "maintenance"}]);
    let mut new_shoot = shoot_manifest("wi", "brand-new");
    new_shoot["metadata"]["creationTimestamp"] = json!("2030-01-01T00:00:00Z");
    let overlay = dir.join("overlay.yaml");
    std::fs::write(
        &overlay,
        format!(
            "{}---\n{}",
            serde_yaml_ng::to_string(&seed2).unwrap(),
            serde_yaml_ng::to_string(&new_shoot).unwrap()
        ),
    )
    .unwrap();
    let out = simulate(args(
        &proxy.kubeconfig,
        &["-o", "json", "-f", overlay.to_str().unwrap()],
    ))
    .await;
    let got = decisions(&json_out(&out));
    assert_eq!(
        got,
        [
            ("garden-wi/p1".to_string(), "s1".to_string()),
            ("garden-wi/p2".to_string(), "s1".to_string()),
            ("garden-wi/p3".to_string(), "s1".to_string()),
            ("garden-wi/brand-new".to_string(), "s1".to_string()),
        ],
        "the tainted s2 of the overlay replaces the cluster's"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("replaces Seed s2"), "{stderr}");

    // --replay: the bound shoots are decided again too, in creation order
    let out = simulate(args(&proxy.kubeconfig, &["-o", "json", "--replay"])).await;
    let got = decisions(&json_out(&out));
    let shoots: Vec<&str> = got.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(
        shoots,
        [
            "garden-wi/bound-a",
            "garden-wi/bound-b",
            "garden-wi/p1",
            "garden-wi/p2",
            "garden-wi/p3"
        ]
    );
    let on_s1 = got.iter().filter(|(_, s)| s == "s1").count();
    assert!(
        on_s1 == 2 || on_s1 == 3,
        "replayed, the spread evens the seeds out: {got:?}"
    );

    // --compare: bin-packing (new) against the default spread (old)
    let pack = dir.join("pack.yaml");
    std::fs::write(
        &pack,
        "apiVersion: scheduler.config.gardener.cloud/v1alpha1\nkind: SchedulerConfiguration\nschedulers:\n  shoot:\n    priorities:\n    - name: ResourceFit\n      weight: 1\n      args: {strategy: MostAllocated}\n",
    )
    .unwrap();
    let spread = dir.join("spread.yaml");
    std::fs::write(
        &spread,
        "apiVersion: scheduler.config.gardener.cloud/v1alpha1\nkind: SchedulerConfiguration\n",
    )
    .unwrap();
    let out = simulate(args(
        &proxy.kubeconfig,
        &[
            "-o",
            "json",
            "--config",
            pack.to_str().unwrap(),
            "--compare",
            spread.to_str().unwrap(),
        ],
    ))
    .await;
    let v = json_out(&out);
    let diffs = v["differences"].as_array().unwrap();
    assert!(!diffs.is_empty(), "{v:#}");
    for d in diffs {
        assert_eq!(d["new"]["seed"], "s1", "bin-packing fills s1: {d:#}");
        assert_eq!(d["old"]["seed"], "s2", "{d:#}");
        assert!(
            d["oldSeedUnderNew"]
                .as_str()
                .unwrap()
                .starts_with("s2: score"),
            "{d:#}"
        );
    }
    assert_eq!(v["old"]["placed"], 3);
    assert_eq!(v["new"]["placed"], 3);
    assert_eq!(v["new"]["shootsPerRegion"]["local-1"], 5);
    assert_eq!(v["new"]["utilisation"]["max"], 50.0, "5 shoots on s1 of 10");

    // both together: the whole landscape under both configurations
    let out = simulate(args(
        &proxy.kubeconfig,
        &[
            "--replay",
            "--config",
            pack.to_str().unwrap(),
            "--compare",
            spread.to_str().unwrap(),
        ],
    ))
    .await;
    assert!(out.status.success());
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("Summary (old):\n  placed 5/5"), "{table}");
    assert!(table.contains("Summary (new):\n  placed 5/5"), "{table}");
    assert!(
        proxy.requests().iter().all(|(m, _)| m == "GET"),
        "nothing was written"
    );
}

/// On a CRD cluster: it stores shoots that gardener-apiserver refuses (a region that is a number).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_forbidden_list_an_unreachable_cluster_and_a_bad_overlay_are_clear_errors() {
    let api = ApiServer::start_crd_cluster("whatif-errors");
    let client = api.client().await;
    landscape(&client).await;

    // Seeds cannot be done without: the read fails and nothing is printed as a result
    let no_seeds = RecordingProxy::start(&api, "no-seeds", Some("/seeds")).await;
    let out = simulate(args(&no_seeds.kubeconfig, &[])).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "no partial result");
    assert!(
        stderr.contains("listing Seeds: forbidden")
            && stderr.contains("needs `list` on seeds.core.gardener.cloud"),
        "{stderr}"
    );

    // a shoot the API server stores but that does not decode (spec is schemaless in the CRD)
    let mut broken = shoot_manifest("wi", "broken");
    broken["spec"]["region"] = json!(5);
    raw_ns::<gardener_scheduler::api::Shoot>(&client, "garden-wi")
        .create(
            &Default::default(),
            &serde_json::from_value(broken).unwrap(),
        )
        .await
        .unwrap();

    // a shoot whose region holds a line break: gardener-apiserver asks only a non-empty region
    // and stores it, so it is decided as upstream decides it (no seed is in that region); the
    // terminal sees the line break escaped
    let mut injected = shoot_manifest("wi", "injected");
    injected["spec"]["region"] = json!("eu-west-1\n---\nkind: Secret");
    raw_ns::<gardener_scheduler::api::Shoot>(&client, "garden-wi")
        .create(
            &Default::default(),
            &serde_json::from_value(injected).unwrap(),
        )
        .await
        .unwrap();

    // Projects are optional, as for the scheduler: a warning, and the decision goes on; the
    // malformed shoot is skipped with a warning naming it and its field, as the scheduler does
    let no_projects = RecordingProxy::start(&api, "no-projects", Some("/projects")).await;
    let out = simulate(args(&no_projects.kubeconfig, &[])).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(
        stderr.contains("warning: Projects: no permission to list projects.core.gardener.cloud"),
        "{stderr}"
    );
    assert!(
        stderr.contains("warning: skipped malformed Shoot garden-wi/broken: spec.region"),
        "{stderr}"
    );
    assert!(!stderr.contains("garden-wi/injected"), "{stderr}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("3/4 pending shoots scheduled"), "{stdout}");
    assert!(!stdout.contains("kind: Secret\n"), "{stdout}");
    assert!(
        !stderr.contains("reading "),
        "no progress off a terminal: {stderr}"
    );

    // on a terminal, the read shows its progress per kind on stderr
    let kubeconfig = api.what_if_identity().display().to_string();
    let out = tokio::task::spawn_blocking(move || {
        Command::new("script")
            .args(["-qec"])
            .arg(format!(
                "{} simulate --kubeconfig {kubeconfig} --chunk-size 2",
                env!("CARGO_BIN_EXE_gardener-scheduler")
            ))
            .arg("/dev/null")
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let terminal = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{terminal}");
    assert!(terminal.contains("reading Shoots: 2..."), "{terminal}");
    assert!(terminal.contains("read Shoots: 7"), "{terminal}");
    assert!(terminal.contains("read Seeds: 2"), "{terminal}");

    // nothing listens there
    let nowhere = api.state.join("kubeconfig-nowhere");
    std::fs::write(
        &nowhere,
        kubeconfig_for(&format!("http://127.0.0.1:{}", free_port()), "unused"),
    )
    .unwrap();
    let out = simulate(args(&nowhere, &[])).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(
        stderr.contains("listing Seeds: the cluster could not be reached"),
        "{stderr}"
    );

    // a kubeconfig that is not one: a usage error
    let bad = api.state.join("kubeconfig-bad");
    std::fs::write(&bad, "clusters: [").unwrap();
    let out = simulate(args(&bad, &[])).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("kubeconfig-bad"), "{stderr}");

    // an overlay that is not YAML: a usage error naming the file, before the cluster is read
    let overlay = api.state.join("bad-overlay.yaml");
    std::fs::write(&overlay, "kind: Seed\n  metadata: [\n").unwrap();
    let out = simulate(args(
        &api.what_if_identity(),
        &["-f", overlay.to_str().unwrap()],
    ))
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("bad-overlay.yaml"), "{stderr}");
    assert!(out.stdout.is_empty());
}

/// The CRDs default what a structural schema can express: the test API server stores a bare
/// shoot and seeds as gardener-apiserver would, and `simulate --kubeconfig` on them decides as
/// `simulate -f` on the same objects written by hand (the files get the same defaults).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_crds_store_the_defaults_files_are_read_with() {
    let api = ApiServer::start_crd_cluster("defaults");
    let client = api.client().await;
    let cloud_profile = json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile",
        "metadata": {"name": "local"},
        "spec": {"type": "local", "regions": [{"name": "local-1"}]}});
    let seed = |name: &str, spec_extra: Value| {
        let mut spec = json!({"provider": {"type": "local", "region": "local-1"},
            "networks": {"pods": "10.1.0.0/16", "services": "10.2.0.0/16"}});
        spec.as_object_mut()
            .unwrap()
            .extend(spec_extra.as_object().unwrap().clone());
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed",
            "metadata": {"name": name}, "spec": spec})
    };
    let plain = seed("plain", json!({}));
    // `scheduling` without `visible`: stored invisible.
    let hidden = seed("hidden", json!({"settings": {"scheduling": {}}}));
    let shoot = json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
        "metadata": {"name": "bare", "namespace": "garden-dev"},
        "spec": {"cloudProfileName": "local", "region": "local-1",
                 "provider": {"type": "local", "workers": [{"name": "w"}]}}});
    ensure_namespace(&client, "garden-dev").await;
    let post = kube::api::PostParams::default();
    let obj =
        |v: &Value| -> kube::api::DynamicObject { serde_json::from_value(v.clone()).unwrap() };
    raw::<gardener_scheduler::api::CloudProfile>(&client)
        .create(&post, &obj(&cloud_profile))
        .await
        .unwrap();
    for s in [&plain, &hidden] {
        raw::<gardener_scheduler::api::Seed>(&client)
            .create(&post, &obj(s))
            .await
            .unwrap();
        set_seed_status(&client, s["metadata"]["name"].as_str().unwrap(), 10).await;
    }
    raw_ns::<gardener_scheduler::api::Shoot>(&client, "garden-dev")
        .create(&post, &obj(&shoot))
        .await
        .unwrap();

    let stored = raw_ns::<gardener_scheduler::api::Shoot>(&client, "garden-dev")
        .get("bare")
        .await
        .unwrap()
        .data;
    assert_eq!(stored["spec"]["purpose"], "evaluation", "{stored}");
    assert_eq!(
        stored["spec"]["schedulerName"], "default-scheduler",
        "{stored}"
    );
    assert_eq!(
        stored["spec"]["networking"],
        json!({"ipFamilies": ["IPv4"]}),
        "{stored}"
    );
    let seeds = raw::<gardener_scheduler::api::Seed>(&client);
    let visible = |v: &Value| v["spec"]["settings"]["scheduling"]["visible"].clone();
    assert_eq!(
        visible(&seeds.get("plain").await.unwrap().data),
        json!(true)
    );
    assert_eq!(
        visible(&seeds.get("hidden").await.unwrap().data),
        json!(false)
    );

    // The same objects by hand, with the status the seeds were given.
    let status = json!({"lastOperation": {"type": "Reconcile", "state": "Succeeded"},
        "conditions": [{"type": "GardenletReady", "status": "True"}],
        "allocatable": {"shoots": "10"}});
    let mut files = vec![cloud_profile.clone(), shoot.clone()];
    for mut s in [plain, hidden] {
        s["status"] = status.clone();
        files.push(s);
    }
    let file = api.state.join("by-hand.yaml");
    let text: Vec<String> = files
        .iter()
        .map(|v| serde_yaml_ng::to_string(v).unwrap())
        .collect();
    std::fs::write(&file, text.join("---\n")).unwrap();
    let now = "2026-01-01T00:00:00Z";
    let from_files = json_out(
        &simulate(vec![
            "-f".into(),
            file.display().to_string(),
            "--now".into(),
            now.into(),
            "-o".into(),
            "json".into(),
        ])
        .await,
    );
    let live = json_out(&simulate(args(&api.what_if_identity(), &["-o", "json"])).await);
    let want = vec![("garden-dev/bare".to_string(), "plain".to_string())];
    assert_eq!(decisions(&from_files), want, "{from_files}");
    assert_eq!(decisions(&live), want, "{live}");
}

/// The live commands the README and docs/usage/what-if.md show, as a reader runs them:
/// `simulate --live` finds the cluster through `KUBECONFIG` as kubectl does and decides as
/// `--kubeconfig FILE` does, `--live -f new-shoot.yaml --explain` explains a shoot that is not in
/// the cluster, and `plan drain --kubeconfig` prints its table and its HTML report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_live_commands_the_docs_show_run_against_the_cluster() {
    let api = ApiServer::start("doc-commands");
    let client = api.client().await;
    landscape(&client).await;
    let with_kubeconfig_env = |args: &[&str]| {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let kubeconfig = api.what_if_identity();
        tokio::task::spawn_blocking(move || {
            Command::new(env!("CARGO_BIN_EXE_gardener-scheduler"))
                .args(&args)
                .env("KUBECONFIG", kubeconfig)
                .output()
                .unwrap()
        })
    };
    let now = ["--now", "2026-01-01T00:00:00Z"];

    let by_file = json_out(&simulate(args(&api.what_if_identity(), &["-o", "json"])).await);
    let live = with_kubeconfig_env(&[&["simulate", "--live", "-o", "json"][..], &now].concat());
    let live = json_out(&live.await.unwrap());
    assert_eq!(decisions(&live), decisions(&by_file));
    assert_eq!(decisions(&live).len(), 3, "{live}");

    let overlay = api.state.join("new-shoot.yaml");
    std::fs::write(&overlay, shoot_manifest("wi", "new").to_string()).unwrap();
    let out = with_kubeconfig_env(
        &[
            &["simulate", "--live", "-f", overlay.to_str().unwrap()][..],
            &["--explain", "garden-wi/new"],
            &now,
        ]
        .concat(),
    )
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_success(&out);
    assert!(stdout.contains("garden-wi/new"), "{stdout}");
    assert!(stdout.contains("s1") && stdout.contains("s2"), "{stdout}");

    let plan = |extra: &[&str]| {
        let mut a: Vec<String> = ["plan", "drain", "s1", "--kubeconfig"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        a.push(api.what_if_identity().display().to_string());
        a.extend(extra.iter().chain(&now).map(|s| s.to_string()));
        run_cli(a)
    };
    let out = plan(&[]).await;
    let table = String::from_utf8_lossy(&out.stdout);
    assert_success(&out);
    assert!(table.contains("garden-wi/bound-a"), "{table}");
    let out = plan(&["-o", "html"]).await;
    let html = String::from_utf8_lossy(&out.stdout);
    assert_success(&out);
    assert!(html.contains("<h1>Drain plan for s1</h1>"), "{html}");
    assert!(html.contains("garden-wi/bound-a"), "{html}");
}

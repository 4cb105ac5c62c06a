//! Harness for end-to-end tests: a garden cluster's API per test (tests/garden/), the scheduler
//! binary as a child process, and builders for the objects the tests create.
//!
//! Everything started here is stopped on drop. Failing to start the API server fails the test;
//! nothing is skipped.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use kube::api::{Api, ApiResource, DynamicObject, Patch, PatchParams, PostParams};
use kube::{Client, Resource};
use serde_json::{Value, json};

use gardener_scheduler::api::{CloudProfile, Project, Seed, Shoot};

pub mod common;
pub mod fault_proxy;
pub mod gardenlet;
pub mod proxy;

#[allow(unused_imports)] // not every binary built on this harness checks a command
pub use common::{assert_success, elements, fresh_dir, string};

/// Upper bound for any wait in these tests; generous for a loaded 2-core machine.
pub const DEADLINE: Duration = Duration::from_secs(60);

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The bin dir with etcd, kube-apiserver, gardener-apiserver and render-scheduler, built once via
/// tests/garden/ensure.sh.
pub fn garden_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| {
        dir_printed_by(
            "tests/garden/ensure.sh",
            "; the end-to-end tests need Gardener's API servers",
        )
    })
}

/// Runs the repository's `script`, its stderr shown, and returns the directory it prints; a
/// failure names the script, its exit status and `why` after them.
fn dir_printed_by(script: &str, why: &str) -> PathBuf {
    let out = Command::new(repo().join(script))
        .stderr(Stdio::inherit())
        .output()
        .unwrap_or_else(|e| panic!("running {script}: {e}"));
    assert!(
        out.status.success(),
        "{script} failed ({}){why}",
        out.status
    );
    PathBuf::from(String::from_utf8(out.stdout).unwrap().trim())
}

/// The ServiceAccount, ClusterRole(Binding) and Role(Binding) objects the chart renders with
/// `helm_args` as release `name` in namespace `garden`, and the name of the ServiceAccount they
/// bind (`subject`, added as an object here, when the chart binds its roles to an account it does
/// not create).
pub fn chart_rbac(name: &str, helm_args: &[&str], subject: Option<&str>) -> (Vec<Value>, String) {
    let render = Command::new(tools_bin().join("helm"))
        .args(["template", name])
        .arg(repo().join("charts/gardener-scheduler"))
        .args(["--namespace", "garden"])
        .args(helm_args)
        .output()
        .expect("running helm");
    assert!(
        render.status.success(),
        "helm template {name} {helm_args:?}: {}",
        String::from_utf8_lossy(&render.stderr)
    );
    let mut rbac = Vec::new();
    let mut account = subject.map(str::to_string);
    for doc in serde_yaml_ng::Deserializer::from_slice(&render.stdout) {
        let v: Value = match serde::Deserialize::deserialize(doc) {
            Ok(Value::Null) => continue,
            Ok(v) => v,
            Err(e) => panic!("helm template {name}: {e}"),
        };
        let kind = v["kind"].as_str().unwrap_or_default();
        if kind == "ServiceAccount" && account.is_none() {
            account = v["metadata"]["name"].as_str().map(str::to_string);
        }
        if matches!(
            kind,
            "ServiceAccount" | "ClusterRole" | "ClusterRoleBinding" | "Role" | "RoleBinding"
        ) {
            rbac.push(v);
        }
    }
    let account = account.unwrap_or_else(|| panic!("helm template {name}: no ServiceAccount"));
    if subject.is_some() {
        rbac.push(json!({"apiVersion": "v1", "kind": "ServiceAccount",
                         "metadata": {"name": account, "namespace": "garden"}}));
    }
    (rbac, account)
}

/// The chart's roles for operators of `key` (`whatIfReader`, `planApplier`), rendered with only
/// `key.create` and `key.subjects` set and bound to ServiceAccount `name` in `garden`; as
/// [`chart_rbac`].
pub fn operator_rbac(name: &str, key: &str) -> (Vec<Value>, String) {
    let subjects = format!(
        r#"{key}.subjects=[{{"kind":"ServiceAccount","name":"{name}","namespace":"garden"}}]"#
    );
    let create = format!("{key}.create=true");
    let account = format!("serviceAccount.name={name}");
    chart_rbac(
        name,
        &[
            "--set",
            "rbac.create=false",
            "--set",
            "serviceAccount.create=false",
            "--set",
            &account,
            "--set",
            &create,
            "--set-json",
            &subjects,
        ],
        Some(name),
    )
}

/// The bearer token of a kubeconfig's first user.
pub fn token_of(kubeconfig: &Path) -> String {
    kubeconfig_user(kubeconfig)["user"]["token"]
        .as_str()
        .unwrap_or_else(|| panic!("no token in {}", kubeconfig.display()))
        .to_string()
}

/// The name of a kubeconfig's first user (for the chart's identities: the ServiceAccount).
pub fn account_of(kubeconfig: &Path) -> String {
    kubeconfig_user(kubeconfig)["name"]
        .as_str()
        .unwrap_or_else(|| panic!("no user name in {}", kubeconfig.display()))
        .to_string()
}

fn kubeconfig_user(kubeconfig: &Path) -> Value {
    let text = std::fs::read_to_string(kubeconfig).unwrap();
    let v: Value = serde_yaml_ng::from_str(&text).unwrap();
    v["users"][0].clone()
}

/// Writes `value` as JSON to `path`; returns the path as a string (for command lines).
pub fn write_json(path: &Path, value: &Value) -> String {
    std::fs::write(path, serde_json::to_vec(value).unwrap()).unwrap();
    path.display().to_string()
}

/// The directory with helm and kubectl (hack/tools.sh).
pub fn tools_bin() -> &'static Path {
    static BIN: OnceLock<PathBuf> = OnceLock::new();
    BIN.get_or_init(|| dir_printed_by("hack/tools.sh", ""))
}

fn unique_dir(prefix: &str) -> PathBuf {
    fresh_dir(
        &std::env::temp_dir(),
        &format!("gardener-scheduler-e2e-{prefix}"),
    )
}

/// A free TCP port on the loopback interface, picked at random below the kernel's ephemeral
/// range (`net.ipv4.ip_local_port_range`) and never twice in one test process: a port the kernel
/// hands out for `bind(0)` is one it also hands to outgoing connections, so between picking it
/// and the server's own bind, a client socket (or a parallel test) could take it. Below the
/// ephemeral range only another test's deliberate pick can collide, which start.sh retries.
pub fn free_port() -> u16 {
    use std::collections::HashSet;
    use std::hash::{BuildHasher, RandomState};
    use std::sync::Mutex;
    static GIVEN: Mutex<Option<HashSet<u16>>> = Mutex::new(None);
    let ephemeral_low = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
        .ok()
        .and_then(|r| r.split_whitespace().next()?.parse::<u16>().ok())
        .unwrap_or(32768);
    let (low, high) = (10000u16, ephemeral_low.max(12000));
    let random = RandomState::new();
    let mut given = GIVEN.lock().unwrap_or_else(|e| e.into_inner());
    let given = given.get_or_insert_with(HashSet::new);
    for attempt in 0u64..1000 {
        let port =
            low + (random.hash_one((std::process::id(), attempt)) % u64::from(high - low)) as u16;
        if given.contains(&port) {
            continue;
        }
        if std::net::TcpListener::bind(("127.0.0.1", port)).is_ok() {
            given.insert(port);
            return port;
        }
    }
    panic!("no free port between {low} and {high} on 127.0.0.1 after 1000 tries");
}

/// A garden cluster's API: etcd, kube-apiserver with RBAC and gardener-apiserver behind it
/// (tests/garden/). `kubeconfig` is the administrator's, for setting up and reading back.
pub struct ApiServer {
    pub state: PathBuf,
    pub kubeconfig: PathBuf,
    /// the chart's scheduler identity with the default values ([`ApiServer::scheduler_identity`])
    identity: OnceLock<PathBuf>,
    /// a development cluster serving Gardener's kinds as CRDs (tests/apiserver/), for what
    /// exists only there: `bindingMode: Patch` and the CRDs' own defaults
    crd_cluster: bool,
}

impl ApiServer {
    pub fn start(name: &str) -> ApiServer {
        ApiServer::start_with_flags(name, &[])
    }

    /// [`ApiServer::start`], its client, and [`base_landscape`] for `project` created through it.
    pub async fn start_with_landscape(name: &str, project: &str) -> (ApiServer, Client) {
        let api = ApiServer::start(name);
        let client = api.client().await;
        base_landscape(&client, project).await;
        (api, client)
    }

    /// A development cluster that serves Gardener's kinds as CRDs (config/crd/ on the
    /// apiextensions machinery, tests/apiserver/), as `make start-scheduler` users may run against:
    /// no gardener-apiserver, no admission, no authorization. Only for what exists only there:
    /// `bindingMode: Patch` and the defaults the CRDs' schemas declare.
    pub fn start_crd_cluster(name: &str) -> ApiServer {
        static BIN: OnceLock<PathBuf> = OnceLock::new();
        let bin = BIN.get_or_init(|| dir_printed_by("tests/apiserver/ensure.sh", ""));
        let state = unique_dir(name);
        let out = Command::new(repo().join("tests/apiserver/start.sh"))
            .arg(bin)
            .arg(&state)
            .arg(repo().join("config/crd"))
            .output()
            .expect("running tests/apiserver/start.sh");
        assert!(
            out.status.success(),
            "the CRD cluster did not start:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        ApiServer {
            kubeconfig: state.join("kubeconfig"),
            state,
            identity: OnceLock::new(),
            crd_cluster: true,
        }
    }

    /// As [`ApiServer::start`], with extra flags for both API servers (e.g.
    /// `--watch-cache=false`).
    pub fn start_with_flags(name: &str, flags: &[&str]) -> ApiServer {
        ApiServer::start_with(name, flags, &[])
    }

    /// As [`ApiServer::start_with_flags`], with `kube_flags` for kube-apiserver alone (e.g.
    /// `--bind-address=0.0.0.0`, so that pods reach it at the `kubernetes` Service's address).
    pub fn start_with(name: &str, flags: &[&str], kube_flags: &[&str]) -> ApiServer {
        let state = unique_dir(name);
        let out = Command::new(repo().join("tests/garden/start.sh"))
            .env("E2E_APISERVER_FLAGS", flags.join(" "))
            .env("E2E_KUBE_APISERVER_FLAGS", kube_flags.join(" "))
            .arg(garden_bin())
            .arg(&state)
            .output()
            .expect("running tests/garden/start.sh");
        if !out.status.success() {
            let mut logs = String::new();
            for server in ["kube-apiserver", "gardener-apiserver"] {
                let log = std::fs::read_to_string(state.join(format!("{server}.log")))
                    .unwrap_or_default();
                logs.push_str(&format!(
                    "--- {server}.log (last lines) ---\n{}\n",
                    tail(&log, 30)
                ));
            }
            let _ = Command::new(repo().join("tests/garden/stop.sh"))
                .arg(&state)
                .status();
            panic!(
                "the garden API did not start ({}):\n{}\n{}\n{logs}",
                out.status,
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr),
            );
        }
        ApiServer {
            kubeconfig: state.join("kubeconfig"),
            state,
            identity: OnceLock::new(),
            crd_cluster: false,
        }
    }

    pub async fn client(&self) -> Client {
        let kc = kube::config::Kubeconfig::read_from(&self.kubeconfig).unwrap();
        let cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .unwrap();
        Client::try_from(cfg).unwrap()
    }

    /// The URL of kube-apiserver, the garden cluster's front door.
    pub fn url(&self) -> String {
        if self.crd_cluster {
            let kc = std::fs::read_to_string(&self.kubeconfig).unwrap();
            return kc
                .split("server: \"")
                .nth(1)
                .and_then(|r| r.split('"').next())
                .unwrap()
                .to_string();
        }
        std::fs::read_to_string(self.state.join("kube-apiserver-url"))
            .unwrap()
            .trim()
            .to_string()
    }

    /// The CA that signed kube-apiserver's serving certificate.
    pub fn ca_file(&self) -> PathBuf {
        self.state.join("pki/ca.crt")
    }

    /// A client for kube-apiserver that sends no credentials of its own: test proxies forward
    /// with it, so that each request carries its sender's token and RBAC judges the sender.
    pub async fn passthrough_client(&self) -> Client {
        let kc = kube::config::Kubeconfig::read_from(&self.kubeconfig).unwrap();
        let mut cfg = kube::Config::from_custom_kubeconfig(kc, &Default::default())
            .await
            .unwrap();
        cfg.auth_info = Default::default();
        // a proxy neither retries nor gives up on a long watch
        cfg.default_retry = false;
        cfg.read_timeout = None;
        Client::try_from(cfg).unwrap()
    }

    /// The kubeconfig of the scheduler as the chart installs it with its default values (the
    /// configuration the tests' schedulers use, unless they say otherwise): see
    /// [`ApiServer::scheduler_kubeconfig`]. Made once per server.
    pub fn scheduler_identity(&self) -> &Path {
        self.identity
            .get_or_init(|| self.chart_identity("gardener-scheduler", &[], None))
    }

    /// The kubeconfig of an identity, or the administrator's on a CRD cluster (no authorization
    /// there, and no ServiceAccount tokens).
    fn identity_or_admin(&self, make: impl FnOnce() -> PathBuf) -> PathBuf {
        if self.crd_cluster {
            self.kubeconfig.clone()
        } else {
            make()
        }
    }

    /// The kubeconfig of an operator bound to the chart's what-if reader roles
    /// (`whatIfReader.create`): what `simulate --live`, `plan` and `explain` read with.
    pub fn what_if_identity(&self) -> PathBuf {
        self.identity_or_admin(|| self.operator_identity("what-if-reader", "whatIfReader"))
    }

    /// The kubeconfig of an operator bound to the chart's plan applier roles
    /// (`planApplier.create`): what `plan apply` runs with.
    pub fn plan_applier_identity(&self) -> PathBuf {
        self.identity_or_admin(|| self.operator_identity("plan-applier", "planApplier"))
    }

    /// ServiceAccount `name` in `garden`, bound by the chart (rendered with only `key.create`
    /// and `key.subjects` set) to the roles of `key`.
    fn operator_identity(&self, name: &str, key: &str) -> PathBuf {
        let path = self.state.join(format!("kubeconfig-{name}"));
        if path.exists() {
            return path;
        }
        let (rbac, account) = operator_rbac(name, key);
        self.apply_objects(name, &rbac);
        self.kubeconfig_of(name, &account)
    }

    /// A kubeconfig for the scheduler as the chart installs it with `config` as its
    /// configuration file: the chart's ServiceAccount, bound to exactly the ClusterRole and Roles
    /// the chart renders for that file, with a token from the TokenRequest API.
    pub fn scheduler_kubeconfig(&self, config: &Path) -> PathBuf {
        let config = format!("configFile={}", config.display());
        self.identity_or_admin(|| {
            self.chart_identity("gardener-scheduler", &["--set-file", &config], None)
        })
    }

    /// A kubeconfig for a ServiceAccount `name` in `garden` bound to the roles the chart renders
    /// with `helm_args` (release `name`): every ServiceAccount, ClusterRole(Binding) and
    /// Role(Binding) of the render is applied, nothing else. `subject`: the account is not one
    /// the chart creates, so it is created here and the args bind the chart's roles to it (the
    /// what-if reader's and plan applier's `subjects`).
    pub fn chart_identity(&self, name: &str, helm_args: &[&str], subject: Option<&str>) -> PathBuf {
        let (rbac, account) = chart_rbac(name, helm_args, subject);
        self.apply_objects(name, &rbac);
        self.kubeconfig_of(name, &account)
    }

    /// Applies `objects` (server-side, as the administrator), recorded in the state dir as
    /// `objects-<name>.json`.
    pub fn apply_objects(&self, name: &str, objects: &[Value]) {
        let file = self.state.join(format!("objects-{name}.json"));
        write_json(
            &file,
            &json!({"apiVersion": "v1", "kind": "List", "items": objects}),
        );
        self.kubectl(&[
            "apply",
            "--server-side",
            "--force-conflicts",
            "-f",
            &file.display().to_string(),
        ]);
    }

    /// A kubeconfig (`kubeconfig-<name>`) with a new token of ServiceAccount `account` in
    /// `garden`, from the TokenRequest API.
    pub fn kubeconfig_of(&self, name: &str, account: &str) -> PathBuf {
        let token = self.kubectl(&[
            "create",
            "token",
            account,
            "-n",
            "garden",
            "--duration",
            "48h",
        ]);
        let kubeconfig = self.state.join(format!("kubeconfig-{name}"));
        std::fs::write(
            &kubeconfig,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: garden\n  cluster: {{server: \"{}\", certificate-authority: \"{}\"}}\nusers:\n- name: {account}\n  user: {{token: {}}}\ncontexts:\n- name: garden\n  context: {{cluster: garden, user: {account}}}\ncurrent-context: garden\n",
                self.url(),
                self.ca_file().display(),
                token.trim()
            ),
        )
        .unwrap();
        kubeconfig
    }

    /// Runs kubectl as the administrator; fails the test when it fails. Returns its stdout.
    pub fn kubectl(&self, args: &[&str]) -> String {
        let out = Command::new(tools_bin().join("kubectl"))
            .arg("--kubeconfig")
            .arg(&self.kubeconfig)
            .args(args)
            .output()
            .expect("running kubectl");
        assert!(
            out.status.success(),
            "kubectl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8(out.stdout).unwrap()
    }

    /// etcd's client port (start.sh records its URL in the state dir).
    fn etcd_port(&self) -> u16 {
        let url = std::fs::read_to_string(self.state.join("etcd-client-url")).unwrap();
        url.trim().rsplit(':').next().unwrap().parse().unwrap()
    }

    /// etcd's current revision, from the header of a range request to its HTTP gateway.
    pub fn etcd_revision(&self) -> i64 {
        let (status, body) = http_post(self.etcd_port(), "/v3/kv/range", r#"{"key":"AA=="}"#)
            .expect("etcd answers on its client port");
        assert_eq!(status, 200, "etcd range: {body}");
        let v: Value = serde_json::from_str(&body).unwrap();
        v["header"]["revision"]
            .as_str()
            .and_then(|r| r.parse().ok())
            .unwrap_or_else(|| panic!("no revision in {body}"))
    }

    /// Compacts etcd up to its current revision: a watch from any older resourceVersion that
    /// etcd serves (the API server's watch cache off) gets 410 Gone. Returns the revision.
    pub fn compact_etcd(&self) -> i64 {
        let rev = self.etcd_revision();
        // physical: answered once the backend has dropped the old revisions, which takes
        // a while for gigabytes on a loaded machine
        let (status, body) = http_post_waiting(
            self.etcd_port(),
            "/v3/kv/compaction",
            &format!(r#"{{"revision":"{rev}","physical":true}}"#),
            Duration::from_secs(300),
        )
        .expect("etcd answers on its client port");
        assert_eq!(status, 200, "etcd compaction at {rev}: {body}");
        rev
    }

    /// `kube-apiserver.pid` or `.log`; `apiserver.*` on a CRD cluster.
    fn server_file(&self, ext: &str) -> String {
        if self.crd_cluster {
            format!("apiserver.{ext}")
        } else {
            format!("kube-apiserver.{ext}")
        }
    }

    fn apiserver_pid(&self) -> u32 {
        std::fs::read_to_string(self.state.join(self.server_file("pid")))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    /// Kills kube-apiserver, the server every client talks to (etcd and gardener-apiserver
    /// keep running).
    pub fn kill_apiserver(&self) -> Vec<String> {
        let pid = self.apiserver_pid();
        let cmdline = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap();
        let args: Vec<String> = cmdline
            .split(|b| *b == 0)
            .filter(|a| !a.is_empty())
            .map(|a| String::from_utf8_lossy(a).to_string())
            .collect();
        Command::new("kill")
            .arg("-KILL")
            .arg(pid.to_string())
            .status()
            .unwrap();
        let start = Instant::now();
        while Path::new(&format!("/proc/{pid}")).exists() && start.elapsed() < DEADLINE {
            // a killed child of start.sh is reaped by init; wait until it is gone
            if std::fs::read_to_string(format!("/proc/{pid}/stat"))
                .is_ok_and(|s| s.contains(") Z "))
            {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        args
    }

    /// Starts the API server again with the same command line (same port, certificates, etcd).
    pub fn relaunch_apiserver(&self, args: &[String]) {
        let log = std::fs::OpenOptions::new()
            .append(true)
            .open(self.state.join(self.server_file("log")))
            .unwrap();
        let child = Command::new(&args[0])
            .args(&args[1..])
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .spawn()
            .expect("relaunching kube-apiserver");
        std::fs::write(
            self.state.join("kube-apiserver.pid"),
            child.id().to_string(),
        )
        .unwrap();
        // detach: stop.sh stops it by pid
        std::mem::forget(child);
    }
}

impl Drop for ApiServer {
    fn drop(&mut self) {
        let dir = if self.crd_cluster {
            "apiserver"
        } else {
            "garden"
        };
        let _ = Command::new(repo().join(format!("tests/{dir}/stop.sh")))
            .arg(&self.state)
            .status();
        if std::thread::panicking() {
            eprintln!(
                "kept state and logs of the failed test in {}",
                self.state.display()
            );
        } else {
            let _ = std::fs::remove_dir_all(&self.state);
        }
    }
}

/// Debug logs of the scheduler itself, info of its libraries.
pub const DEFAULT_RUST_LOG: &str = "info,gardener_scheduler=debug";

/// `leaderElection` timings of a scheduler process.
#[derive(Clone, Copy)]
pub enum LeaseTimes {
    /// 4 s / 3 s / 500 ms: quick takeovers for tests that do not measure them
    Short,
    /// no keys in the file: the defaults, upstream's 15 s / 10 s / 2 s
    Defaults,
    /// `leaseDuration`, `renewDeadline`, `retryPeriod`
    Custom(&'static str, &'static str, &'static str),
}

/// Options for one scheduler process.
pub struct SchedulerOptions {
    pub leader_elect: bool,
    pub binding_mode: &'static str,
    pub concurrent_syncs: u32,
    /// `schedulers.shoot.backoff` initial and max
    pub backoff: (&'static str, &'static str),
    /// `RUST_LOG` for the process; `None` leaves the filter to `logLevel` (debug)
    pub rust_log: Option<&'static str>,
    /// `clientConnection` `qps` and `burst`; `None` keeps the defaults (50, 100)
    pub client_rate: Option<(f32, i32)>,
    /// the kubeconfig to reach the API server through; `None`: the API server's own
    pub kubeconfig: Option<PathBuf>,
    pub lease: LeaseTimes,
    /// `HOSTNAME` for the process: its leader-election identity starts with `<hostname>_`
    pub hostname: Option<&'static str>,
    /// more environment for the process
    pub env: Vec<(&'static str, String)>,
    /// more keys of `schedulers.shoot`, one per line, as written under it (e.g.
    /// `decisionBudget: 200ms\n`)
    pub shoot_config: &'static str,
}

impl Default for SchedulerOptions {
    fn default() -> Self {
        SchedulerOptions {
            leader_elect: false,
            binding_mode: "Binding",
            concurrent_syncs: 5,
            backoff: ("1s", "4s"),
            rust_log: Some(DEFAULT_RUST_LOG),
            client_rate: None,
            kubeconfig: None,
            lease: LeaseTimes::Short,
            hostname: None,
            env: Vec::new(),
            shoot_config: "",
        }
    }
}

/// The scheduler binary, running against an [`ApiServer`].
pub struct Scheduler {
    pub name: String,
    child: Option<Child>,
    pub health_port: u16,
    pub metrics_port: u16,
    pub log: PathBuf,
}

impl Scheduler {
    pub fn start(api: &ApiServer, name: &str, opts: SchedulerOptions) -> Scheduler {
        let health_port = free_port();
        let mut metrics_port = free_port();
        while metrics_port == health_port {
            metrics_port = free_port();
        }
        let lease = match opts.lease {
            LeaseTimes::Short => {
                "  leaseDuration: 4s\n  renewDeadline: 3s\n  retryPeriod: 500ms\n".to_string()
            }
            LeaseTimes::Defaults => String::new(),
            LeaseTimes::Custom(d, r, p) => {
                format!("  leaseDuration: {d}\n  renewDeadline: {r}\n  retryPeriod: {p}\n")
            }
        };
        let mut config = format!(
            r#"apiVersion: scheduler.config.gardener.cloud/v1alpha1
kind: SchedulerConfiguration
logLevel: debug
logFormat: text
leaderElection:
  leaderElect: {leader}
{lease}  resourceName: gardener-scheduler-leader-election
  resourceNamespace: garden
server:
  healthProbes: {{bindAddress: 127.0.0.1, port: {health_port}}}
  metrics: {{bindAddress: 127.0.0.1, port: {metrics_port}}}
schedulers:
  shoot:
    concurrentSyncs: {syncs}
    retrySyncPeriod: 1s
    bindingMode: {mode}
    backoff: {{initial: {initial}, max: {max}}}
{shoot}"#,
            leader = opts.leader_elect,
            syncs = opts.concurrent_syncs,
            mode = opts.binding_mode,
            initial = opts.backoff.0,
            max = opts.backoff.1,
            shoot = opts
                .shoot_config
                .lines()
                .map(|l| format!("    {l}\n"))
                .collect::<String>(),
        );
        if let Some((qps, burst)) = opts.client_rate {
            config.push_str(&format!(
                "clientConnection: {{qps: {qps}, burst: {burst}}}\n"
            ));
        }
        let cfg_path = api.state.join(format!("scheduler-{name}.yaml"));
        std::fs::write(&cfg_path, config).unwrap();
        let kubeconfig = opts
            .kubeconfig
            .unwrap_or_else(|| api.scheduler_kubeconfig(&cfg_path));
        let env: Vec<(&str, String)> = opts
            .hostname
            .map(|h| ("HOSTNAME", h.to_string()))
            .into_iter()
            .chain(opts.env)
            .collect();
        Self::spawn(
            api,
            name,
            &cfg_path,
            &kubeconfig,
            (health_port, metrics_port),
            opts.rust_log,
            &env,
        )
    }

    /// Runs with a given config file; ports come from the environment (config layering).
    pub fn start_with_config(api: &ApiServer, name: &str, cfg_path: &Path) -> Scheduler {
        let health_port = free_port();
        let mut metrics_port = free_port();
        while metrics_port == health_port {
            metrics_port = free_port();
        }
        let env = [
            (
                "GARDENER_SCHEDULER_SERVER__HEALTH_PROBES__PORT",
                health_port.to_string(),
            ),
            (
                "GARDENER_SCHEDULER_SERVER__METRICS__PORT",
                metrics_port.to_string(),
            ),
            (
                "GARDENER_SCHEDULER_SERVER__HEALTH_PROBES__BIND_ADDRESS",
                "127.0.0.1".to_string(),
            ),
            (
                "GARDENER_SCHEDULER_SERVER__METRICS__BIND_ADDRESS",
                "127.0.0.1".to_string(),
            ),
        ];
        Self::spawn(
            api,
            name,
            cfg_path,
            &api.scheduler_kubeconfig(cfg_path),
            (health_port, metrics_port),
            Some(DEFAULT_RUST_LOG),
            &env,
        )
    }

    /// Runs with a config file exactly as written: no environment overrides. The caller puts
    /// `health_port` and `metrics_port` into the file.
    pub fn start_as_written(
        api: &ApiServer,
        name: &str,
        cfg_path: &Path,
        health_port: u16,
        metrics_port: u16,
    ) -> Scheduler {
        Self::spawn(
            api,
            name,
            cfg_path,
            &api.scheduler_kubeconfig(cfg_path),
            (health_port, metrics_port),
            Some(DEFAULT_RUST_LOG),
            &[],
        )
    }

    fn spawn(
        api: &ApiServer,
        name: &str,
        cfg_path: &Path,
        kubeconfig: &Path,
        (health_port, metrics_port): (u16, u16),
        rust_log: Option<&str>,
        env: &[(&str, String)],
    ) -> Scheduler {
        let log = api.state.join(format!("scheduler-{name}.log"));
        let out = std::fs::File::create(&log).unwrap();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_gardener-scheduler"));
        cmd.arg("--config")
            .arg(cfg_path)
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .env_remove("KUBECONFIG")
            .env_remove("RUST_LOG");
        if let Some(filter) = rust_log {
            cmd.env("RUST_LOG", filter);
        }
        let child = cmd
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(out.try_clone().unwrap())
            .stderr(out)
            .spawn()
            .expect("starting gardener-scheduler");
        Scheduler {
            name: name.into(),
            child: Some(child),
            health_port,
            metrics_port,
            log,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.as_ref().expect("running").id()
    }

    /// SIGKILL: a crash, nothing released.
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGTERM, then waits for the exit.
    pub fn terminate(&mut self) -> ExitStatus {
        let mut c = self.child.take().expect("running");
        Command::new("kill")
            .arg("-TERM")
            .arg(c.id().to_string())
            .status()
            .unwrap();
        let start = Instant::now();
        loop {
            if let Some(status) = c.try_wait().unwrap() {
                return status;
            }
            if start.elapsed() > DEADLINE {
                let _ = c.kill();
                panic!("{} did not exit within {DEADLINE:?} of SIGTERM", self.name);
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// SIGSTOP: the process freezes mid-work, as under a long GC-like stall or a frozen VM.
    pub fn pause(&mut self) {
        self.signal("-STOP");
    }

    /// SIGCONT after [`Scheduler::pause`].
    pub fn resume(&mut self) {
        self.signal("-CONT");
    }

    fn signal(&self, sig: &str) {
        let status = Command::new("kill")
            .arg(sig)
            .arg(self.pid().to_string())
            .status()
            .unwrap();
        assert!(status.success(), "kill {sig} {}", self.name);
    }

    /// Resident memory of the process (VmRSS), in KiB.
    pub fn rss_kib(&self) -> u64 {
        proc_status_kib(self.pid(), "VmRSS").expect("VmRSS in /proc/<pid>/status")
    }

    /// Peak resident memory of the process so far (VmHWM), in KiB.
    pub fn peak_rss_kib(&self) -> u64 {
        proc_status_kib(self.pid(), "VmHWM").expect("VmHWM in /proc/<pid>/status")
    }

    pub fn is_running(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| c.try_wait().unwrap().is_none())
    }

    pub fn logs(&self) -> String {
        std::fs::read_to_string(&self.log).unwrap_or_default()
    }

    pub fn metrics(&self) -> String {
        http_get(self.metrics_port, "/metrics")
            .map(|(_, b)| b)
            .unwrap_or_default()
    }

    /// The value of one sample line (`name{labels}`), if present.
    pub fn metric(&self, series: &str) -> Option<f64> {
        self.metrics()
            .lines()
            .find_map(|l| {
                l.strip_prefix(series)
                    .and_then(|rest| rest.strip_prefix(' '))
            })
            .and_then(|v| v.trim().parse().ok())
    }

    /// The sum of every sample of `name` whose labels include all of `labels`.
    pub fn metric_sum(&self, name: &str, labels: &[(&str, &str)]) -> f64 {
        metric_sum(&self.metrics(), name, labels)
    }

    /// Asserts that the API server refused none of the process's requests (no 403 in
    /// `rest_client_requests_total`), with `what` and the process's log when it did.
    #[track_caller]
    pub fn assert_nothing_refused(&self, what: &str) {
        let refused = self.metric_sum("rest_client_requests_total", &[("code", "403")]);
        assert_eq!(refused, 0.0, "{what}\n{}", self.logs());
    }

    /// Schedulers `one` and `two` that elect a leader, two concurrent syncs each, both ready.
    pub async fn start_electing_pair(api: &ApiServer) -> (Scheduler, Scheduler) {
        let opts = || SchedulerOptions {
            leader_elect: true,
            concurrent_syncs: 2,
            ..Default::default()
        };
        let mut one = Scheduler::start(api, "one", opts());
        let mut two = Scheduler::start(api, "two", opts());
        one.wait_ready().await;
        two.wait_ready().await;
        (one, two)
    }

    /// `/readyz`: status and body; `None` when nothing answers.
    pub fn readyz(&self) -> Option<(u16, String)> {
        http_get(self.health_port, "/readyz")
    }

    pub async fn wait_ready(&mut self) {
        let start = Instant::now();
        loop {
            assert!(self.is_running(), "{} exited:\n{}", self.name, self.logs());
            if matches!(http_get(self.health_port, "/readyz"), Some((200, _))) {
                return;
            }
            assert!(
                start.elapsed() < DEADLINE,
                "{} not ready within {DEADLINE:?}:\n{}",
                self.name,
                self.logs()
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
}

impl Drop for Scheduler {
    fn drop(&mut self) {
        self.kill();
        if std::thread::panicking() {
            eprintln!(
                "--- log of scheduler {} ---\n{}",
                self.name,
                tail(&self.logs(), 80)
            );
        }
    }
}

fn tail(s: &str, n: usize) -> String {
    let lines: Vec<&str> = s.lines().collect();
    lines[lines.len().saturating_sub(n)..].join("\n")
}

/// A memory figure of a running process from `/proc/<pid>/status` (`VmRSS`, `VmHWM`), in KiB;
/// `None` once it has exited.
pub fn proc_status_kib(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    status
        .lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
}

/// A minimal HTTP/1.0 GET on 127.0.0.1; `None` when nothing listens.
pub fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    http_request(port, "GET", path)
}

/// A minimal HTTP/1.0 request without a body on 127.0.0.1; `None` when nothing listens.
pub fn http_request(port: u16, method: &str, path: &str) -> Option<(u16, String)> {
    http_exchange(
        port,
        &format!("{method} {path} HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n"),
        Duration::from_secs(10),
    )
}

/// Sends `request` to 127.0.0.1:`port` and reads the answer, waiting up to `limit` for it: its
/// status and body; `None` when nothing listens or the answer is no HTTP.
fn http_exchange(port: u16, request: &str, limit: Duration) -> Option<(u16, String)> {
    let mut s = TcpStream::connect(("127.0.0.1", port)).ok()?;
    s.set_read_timeout(Some(limit)).ok()?;
    s.write_all(request.as_bytes()).ok()?;
    let mut buf = String::new();
    s.read_to_string(&mut buf).ok()?;
    let status = buf.split_whitespace().nth(1)?.parse().ok()?;
    let body = buf
        .split_once("\r\n\r\n")
        .map(|(_, b)| b.to_string())
        .unwrap_or_default();
    Some((status, body))
}

/// A minimal HTTP/1.0 POST of a JSON body on 127.0.0.1; `None` when nothing listens.
pub fn http_post(port: u16, path: &str, body: &str) -> Option<(u16, String)> {
    http_post_waiting(port, path, body, Duration::from_secs(10))
}

/// As [`http_post`], waiting up to `limit` for the answer.
pub fn http_post_waiting(
    port: u16,
    path: &str,
    body: &str,
    limit: Duration,
) -> Option<(u16, String)> {
    http_exchange(
        port,
        &format!(
            "POST {path} HTTP/1.0\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ),
        limit,
    )
}

/// The sum of every sample of `name` in a Prometheus text exposition whose labels include all
/// of `labels`.
pub fn metric_sum(text: &str, name: &str, labels: &[(&str, &str)]) -> f64 {
    text.lines()
        .filter(|l| !l.starts_with('#'))
        .filter_map(|l| {
            let (series, value) = l.rsplit_once(' ')?;
            let (n, rest) = match series.split_once('{') {
                Some((n, rest)) => (n, rest.trim_end_matches('}')),
                None => (series, ""),
            };
            (n == name
                && labels
                    .iter()
                    .all(|(k, v)| rest.split(',').any(|kv| kv == format!("{k}=\"{v}\""))))
            .then(|| value.parse::<f64>().ok())?
        })
        .sum()
}

/// Polls `f` until it returns `Some`, failing with `what` after [`DEADLINE`].
pub async fn eventually<T, F, Fut>(what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    let start = Instant::now();
    loop {
        if let Some(v) = f().await {
            return v;
        }
        assert!(
            start.elapsed() < DEADLINE,
            "timed out after {DEADLINE:?} waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

// ---- objects

pub fn raw<K: Resource<DynamicType = ()>>(client: &Client) -> Api<DynamicObject> {
    Api::all_with(client.clone(), &ApiResource::erase::<K>(&()))
}

pub fn raw_ns<K: Resource<DynamicType = ()>>(client: &Client, ns: &str) -> Api<DynamicObject> {
    Api::namespaced_with(client.clone(), ns, &ApiResource::erase::<K>(&()))
}

/// Creates the object, as a test's setup does. An overloaded test server may answer a write
/// with a timeout (etcd's `request timed out`) or 429/503 and still commit it: such a write is
/// sent again a few times, and a conflict on a later try means the earlier one took.
pub async fn create(api: &Api<DynamicObject>, value: Value) -> DynamicObject {
    let obj: DynamicObject = serde_json::from_value(value).unwrap();
    let name = obj.metadata.name.clone().unwrap_or_default();
    let mut tries = 0;
    loop {
        tries += 1;
        match api.create(&PostParams::default(), &obj).await {
            Ok(created) => return created,
            Err(kube::Error::Api(s)) if tries > 1 && s.code == 409 => {
                return api.get(&name).await.unwrap();
            }
            Err(kube::Error::Api(s)) if tries < 5 && matches!(s.code, 429 | 500 | 503 | 504) => {
                eprintln!(
                    "creating {name}: {} {}, sending it again",
                    s.code, s.message
                );
                tokio::time::sleep(Duration::from_secs(1)).await;
            }
            Err(e) => panic!("creating {name}: {e}"),
        }
    }
}

/// The CloudProfile `local`, as an operator writes one: a Kubernetes version, a machine image
/// and type, region `local-1` with three zones, for seeds of provider `local`.
pub fn cloud_profile_manifest() -> Value {
    json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile",
           "metadata": {"name": "local"},
           "spec": {"type": "local",
                    "kubernetes": {"versions": [{"version": "1.33.2"}]},
                    "machineImages": [{"name": "local", "versions": [
                        {"version": "1.0.0", "cri": [{"name": "containerd"}]}]}],
                    "machineTypes": [{"name": "local", "cpu": "2", "gpu": "0", "memory": "8Gi"}],
                    "regions": [{"name": "local-1", "zones": [{"name": "0"}, {"name": "1"}, {"name": "2"}]}],
                    "seedSelector": {"providerTypes": ["local"]}}})
}

/// Namespaces `garden` and `garden-<project>`, the Project, its infrastructure credentials
/// (a Secret and the CredentialsBinding `local` that shoots name) and the CloudProfile `local`.
pub async fn base_landscape(client: &Client, project: &str) {
    for name in ["garden".to_string(), format!("garden-{project}")] {
        ensure_namespace(client, &name).await;
    }
    create(
        &raw::<Project>(client),
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
               "metadata": {"name": project}, "spec": {"namespace": format!("garden-{project}")}}),
    )
    .await;
    if serves(client, "security.gardener.cloud/v1alpha1").await {
        project_credentials(client, &format!("garden-{project}")).await;
    }
    create(&raw::<CloudProfile>(client), cloud_profile_manifest()).await;
}

/// Whether the cluster serves the API group version (a CRD cluster serves no
/// `security.gardener.cloud`).
pub async fn serves(client: &Client, group_version: &str) -> bool {
    client.list_api_group_resources(group_version).await.is_ok()
}

fn credentials_binding_resource() -> ApiResource {
    ApiResource {
        group: "security.gardener.cloud".into(),
        version: "v1alpha1".into(),
        api_version: "security.gardener.cloud/v1alpha1".into(),
        kind: "CredentialsBinding".into(),
        plural: "credentialsbindings".into(),
    }
}

/// The Secret `local-credentials` and the CredentialsBinding `local` in `namespace`.
pub async fn project_credentials(client: &Client, namespace: &str) {
    let secrets: Api<DynamicObject> = Api::namespaced_with(
        client.clone(),
        namespace,
        &ApiResource::erase::<k8s_openapi::api::core::v1::Secret>(&()),
    );
    create(
        &secrets,
        json!({"apiVersion": "v1", "kind": "Secret",
               "metadata": {"name": "local-credentials", "namespace": namespace},
               "stringData": {"token": "local"}}),
    )
    .await;
    let bindings: Api<DynamicObject> =
        Api::namespaced_with(client.clone(), namespace, &credentials_binding_resource());
    create(
        &bindings,
        json!({"apiVersion": "security.gardener.cloud/v1alpha1", "kind": "CredentialsBinding",
               "metadata": {"name": "local", "namespace": namespace},
               "provider": {"type": "local"},
               "credentialsRef": {"apiVersion": "v1", "kind": "Secret",
                                  "name": "local-credentials", "namespace": namespace}}),
    )
    .await;
}

/// The parts of a seed's spec every seed has, as gardener-apiserver requires them: ingress and
/// DNS, networks. `provider` and the rest come from the caller.
pub fn seed_manifest(name: &str, spec: Value) -> Value {
    let mut full = json!({
        "ingress": {"domain": format!("ingress.{name}.seed.example.com"), "controller": {"kind": "nginx"}},
        "dns": {"provider": {"type": "local", "credentialsRef": {"apiVersion": "v1", "kind": "Secret", "name": "seed-dns", "namespace": "garden"}},
                "internal": {"type": "local", "domain": "internal.seed.example.com",
                             "credentialsRef": {"apiVersion": "v1", "kind": "Secret", "name": "seed-dns", "namespace": "garden"}}},
        "networks": {"nodes": "172.18.0.0/16", "pods": "10.1.0.0/16", "services": "10.2.0.0/16",
                     "shootDefaults": {"pods": "100.96.0.0/11", "services": "100.64.0.0/13"}},
        "settings": {"scheduling": {"visible": true}}});
    for (k, v) in spec.as_object().cloned().unwrap_or_default() {
        full[k] = v;
    }
    json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed",
           "metadata": {"name": name}, "spec": full})
}

/// A ready seed of provider `local` in region `local-1` with room for `shoots` shoots. Status is
/// a subresource, so it is written through `/status` after the create.
pub async fn create_seed(client: &Client, name: &str, shoots: u32, taints: &[&str]) {
    let api = raw::<Seed>(client);
    let taints: Vec<Value> = taints.iter().map(|k| json!({"key": k})).collect();
    create(
        &api,
        seed_manifest(
            name,
            json!({"provider": {"type": "local", "region": "local-1", "zones": ["0", "1", "2"]},
                   "taints": taints}),
        ),
    )
    .await;
    set_seed_status(client, name, shoots).await;
}

pub async fn set_seed_status(client: &Client, name: &str, shoots: u32) {
    try_set_seed_status(client, name, shoots).await.unwrap();
}

/// A ready seed's status with room for `shoots`, or the API server's error.
pub async fn try_set_seed_status(client: &Client, name: &str, shoots: u32) -> kube::Result<()> {
    let status = json!({"status": {
        "lastOperation": {"type": "Reconcile", "state": "Succeeded", "progress": 100},
        "conditions": [{"type": "GardenletReady", "status": "True", "reason": "GardenletReady"}],
        "allocatable": {"shoots": shoots.to_string()},
        "capacity": {"shoots": shoots.to_string()}}});
    raw::<Seed>(client)
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .map(drop)
}

/// The seed's `status.allocatable.shoots`; 0 when it has none.
pub fn allocatable_shoots(seed: &Seed) -> u64 {
    seed.status
        .allocatable
        .get("shoots")
        .map(|q| q.0.parse().unwrap())
        .unwrap_or(0)
}

/// A ready seed in region `region` (which the tests' shoots do not ask for) with room for
/// `shoots` shoots: a seed someone else may assign shoots to, which the scheduler never picks
/// under the SameRegion strategy.
pub async fn create_seed_in(client: &Client, name: &str, region: &str, shoots: u32) {
    create(
        &raw::<Seed>(client),
        seed_manifest(
            name,
            json!({"provider": {"type": "local", "region": region, "zones": ["0", "1", "2"]}}),
        ),
    )
    .await;
    set_seed_status(client, name, shoots).await;
}

/// Replaces a seed's taints.
pub async fn set_seed_taints(client: &Client, name: &str, taints: &[&str]) {
    let taints: Vec<Value> = taints.iter().map(|k| json!({"key": k})).collect();
    raw::<Seed>(client)
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"taints": taints}})),
        )
        .await
        .unwrap();
}

/// A pending shoot of project `project` in region `local-1`.
pub fn shoot_manifest(project: &str, name: &str) -> Value {
    json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
           "metadata": {"name": name, "namespace": format!("garden-{project}")},
           "spec": {"cloudProfile": {"kind": "CloudProfile", "name": "local"},
                    "region": "local-1", "purpose": "evaluation",
                    "kubernetes": {"version": "1.33.2"},
                    "credentialsBindingName": "local",
                    "networking": {"type": "calico", "nodes": "10.10.0.0/16"},
                    "provider": {"type": "local", "workers": [
                        {"name": "worker-1", "machine": {"type": "local", "image": {"name": "local"}},
                         "minimum": 1, "maximum": 2, "zones": ["0"]}]}}})
}

pub async fn create_shoot(client: &Client, project: &str, name: &str) {
    create(
        &raw_ns::<Shoot>(client, &format!("garden-{project}")),
        shoot_manifest(project, name),
    )
    .await;
}

pub async fn get_shoot(client: &Client, project: &str, name: &str) -> Shoot {
    Api::<Shoot>::namespaced(client.clone(), &format!("garden-{project}"))
        .get(name)
        .await
        .unwrap()
}

pub async fn list_shoots(client: &Client, project: &str) -> Vec<Shoot> {
    Api::<Shoot>::namespaced(client.clone(), &format!("garden-{project}"))
        .list(&Default::default())
        .await
        .unwrap()
        .items
}

/// events.k8s.io Events about one shoot, oldest first.
pub async fn shoot_events(
    client: &Client,
    project: &str,
    shoot: &str,
) -> Vec<k8s_openapi::api::events::v1::Event> {
    let mut events: Vec<_> = Api::<k8s_openapi::api::events::v1::Event>::namespaced(
        client.clone(),
        &format!("garden-{project}"),
    )
    .list(&Default::default())
    .await
    .unwrap()
    .items
    .into_iter()
    .filter(|e| e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(shoot))
    .collect();
    events.sort_by_key(|e| e.event_time.as_ref().map(|t| t.0));
    events
}

/// Waits, as [`eventually`] does for `what`, for the first event with `reason` about the shoot.
pub async fn event_with_reason(
    client: &Client,
    what: &str,
    project: &str,
    shoot: &str,
    reason: &str,
) -> k8s_openapi::api::events::v1::Event {
    eventually(what, || async {
        shoot_events(client, project, shoot)
            .await
            .into_iter()
            .find(|e| e.reason.as_deref() == Some(reason))
    })
    .await
}

/// Waits, as [`eventually`] does for `what`, until the shoot has a seed; returns the shoot.
pub async fn bound_shoot(client: &Client, what: &str, project: &str, name: &str) -> Shoot {
    eventually(what, || async {
        let s = get_shoot(client, project, name).await;
        seed_of(&s).is_some().then_some(s)
    })
    .await
}

/// Waits, as [`eventually`] does for `what`, until the shoot has a seed; returns the seed's name.
pub async fn seed_when_bound(client: &Client, what: &str, project: &str, name: &str) -> String {
    eventually(what, || async {
        seed_of(&get_shoot(client, project, name).await).map(str::to_string)
    })
    .await
}

/// Waits, as [`eventually`] does for `what`, until `n` shoots of the project have a seed.
pub async fn wait_bound(client: &Client, what: &str, project: &str, n: usize) {
    eventually(what, || async {
        let bound = list_shoots(client, project)
            .await
            .iter()
            .filter(|s| seed_of(s).is_some())
            .count();
        (bound == n).then_some(())
    })
    .await;
}

pub fn seed_of(shoot: &Shoot) -> Option<&str> {
    shoot.spec.seed_name.as_deref().filter(|s| !s.is_empty())
}

/// Applies every manifest of example/dev as a user would: objects first, then seed status
/// through the status subresource.
pub async fn apply_example_dev(client: &Client) {
    let dir = repo().join("example/dev");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    // namespaces first, then what lives in them
    files.sort_by_key(|p| (!p.ends_with("namespace.yaml"), p.clone()));
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        for doc in serde_yaml_ng::Deserializer::from_str(&text) {
            let value: Value = match serde::Deserialize::deserialize(doc) {
                Ok(Value::Null) => continue,
                Ok(v) => v,
                Err(e) => panic!("{}: {e}", file.display()),
            };
            let kind = value["kind"].as_str().unwrap().to_string();
            let ns = value["metadata"]["namespace"].as_str().map(str::to_string);
            let ar = match kind.as_str() {
                "Namespace" => ApiResource::erase::<k8s_openapi::api::core::v1::Namespace>(&()),
                "CloudProfile" => ApiResource::erase::<CloudProfile>(&()),
                "Project" => ApiResource::erase::<Project>(&()),
                "Seed" => ApiResource::erase::<Seed>(&()),
                "Shoot" => ApiResource::erase::<Shoot>(&()),
                "Secret" => ApiResource::erase::<k8s_openapi::api::core::v1::Secret>(&()),
                "CredentialsBinding" => credentials_binding_resource(),
                other => panic!("{}: unexpected kind {other}", file.display()),
            };
            let api: Api<DynamicObject> = match &ns {
                Some(ns) => Api::namespaced_with(client.clone(), ns, &ar),
                None => Api::all_with(client.clone(), &ar),
            };
            if kind == "CredentialsBinding"
                && !serves(client, "security.gardener.cloud/v1alpha1").await
            {
                // a CRD cluster has no such kind (nor a gardener-apiserver that asks for it)
                continue;
            }
            if kind == "Namespace" {
                ensure_namespace(client, value["metadata"]["name"].as_str().unwrap()).await;
                continue;
            }
            create(&api, value.clone()).await;
            if kind == "Seed" && !value["status"].is_null() {
                let name = value["metadata"]["name"].as_str().unwrap();
                api.patch_status(
                    name,
                    &PatchParams::default(),
                    &Patch::Merge(&json!({"status": value["status"]})),
                )
                .await
                .unwrap();
            }
        }
    }
}

/// A client once the (relaunched) API server answers a list of seeds.
pub async fn answering_client(api: &ApiServer) -> Client {
    eventually("the API server to answer again", || async {
        let c = api.client().await;
        kube::Api::<gardener_scheduler::api::Seed>::all(c.clone())
            .list(&Default::default())
            .await
            .ok()
            .map(|_| c)
    })
    .await
}

/// Creates a namespace; one that exists already is fine.
pub async fn ensure_namespace(client: &Client, name: &str) {
    let ns: Api<k8s_openapi::api::core::v1::Namespace> = Api::all(client.clone());
    let n: k8s_openapi::api::core::v1::Namespace = serde_json::from_value(
        json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}),
    )
    .unwrap();
    match ns.create(&PostParams::default(), &n).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 409 => {}
        Err(e) => panic!("creating namespace {name}: {e}"),
    }
}

/// Assigns `seed` to a pending shoot as another client would (an operator, another scheduler):
/// through the `shoots/binding` subresource, the only way gardener-apiserver lets `spec.seedName`
/// be set (a CRD cluster has no such subresource: there the shoot is patched).
pub async fn assign_seed(client: &Client, namespace: &str, name: &str, seed: &str) {
    let shoots = raw_ns::<Shoot>(client, namespace);
    if serves(client, "security.gardener.cloud/v1alpha1").await {
        let mut shoot = shoots.get(name).await.unwrap();
        shoot.data["spec"]["seedName"] = seed.into();
        shoots
            .replace_subresource("binding", name, &PostParams::default(), &shoot)
            .await
            .unwrap();
    } else {
        shoots
            .patch(
                name,
                &PatchParams::default(),
                &Patch::Merge(json!({"spec": {"seedName": seed}})),
            )
            .await
            .unwrap();
    }
}

/// Adds labels to a seed.
pub async fn label_seed(client: &Client, name: &str, labels: &[(&str, &str)]) {
    let labels: serde_json::Map<String, Value> = labels
        .iter()
        .map(|(k, v)| (k.to_string(), Value::from(*v)))
        .collect();
    raw::<Seed>(client)
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"labels": labels}})),
        )
        .await
        .unwrap();
}

/// A shoot of project `project` already running on `seed`.
pub async fn create_bound_shoot(client: &Client, project: &str, name: &str, seed: &str) {
    let mut m = shoot_manifest(project, name);
    m["spec"]["seedName"] = seed.into();
    create(&raw_ns::<Shoot>(client, &format!("garden-{project}")), m).await;
}

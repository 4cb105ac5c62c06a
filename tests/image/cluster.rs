//! The parts of a cluster the image check provides around a pod, as a kubelet and a cluster
//! network would: a Service address for the API server (whose certificate names it), a
//! network namespace per pod, the service-account token directory, ConfigMap volumes in the
//! kubelet's layout, and the container itself, run by podman with what the Deployment says.

use std::collections::BTreeMap;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::pod::{PodRun, memory_bytes};

/// The address of the `kubernetes` Service, as pods see it in their environment.
pub const SERVICE_IP: &str = "10.96.0.1";
/// Where the ServiceAccount admission mounts the token, CA bundle and namespace.
pub const TOKEN_DIR: &str = "/var/run/secrets/kubernetes.io/serviceaccount";

fn run(cmd: &mut Command) -> Output {
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed ({}):\n{}{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    out
}

fn ip(args: &[&str]) {
    run(Command::new("ip").args(args));
}

pub fn scratch(name: &str) -> PathBuf {
    crate::support::fresh_dir(
        &std::env::temp_dir(),
        &format!("gardener-scheduler-image-{name}"),
    )
}

/// The Service IP on this host's loopback interface, where the API server listens (this kernel
/// may have no dummy interfaces).
pub struct ServiceAddress;

impl ServiceAddress {
    pub fn add() -> ServiceAddress {
        let address = format!("{SERVICE_IP}/32");
        let _ = Command::new("ip")
            .args(["addr", "del", &address, "dev", "lo"])
            .output();
        ip(&["addr", "add", &address, "dev", "lo"]);
        ServiceAddress
    }
}

impl Drop for ServiceAddress {
    fn drop(&mut self) {
        let address = format!("{SERVICE_IP}/32");
        let _ = Command::new("ip")
            .args(["addr", "del", &address, "dev", "lo"])
            .output();
    }
}

/// A pod's network: a namespace with one veth to the host, routed to the host by default.
pub struct PodNetwork {
    pub netns: String,
    host_link: String,
    pub pod_ip: String,
}

impl PodNetwork {
    pub fn new(index: u8) -> PodNetwork {
        let netns = format!("gs-pod-{index}");
        let host_link = format!("gs-veth-{index}");
        let (host_ip, pod_ip) = (format!("10.250.{index}.1"), format!("10.250.{index}.2"));
        let _ = Command::new("ip").args(["netns", "del", &netns]).output();
        let _ = Command::new("ip")
            .args(["link", "del", &host_link])
            .output();
        ip(&["netns", "add", &netns]);
        ip(&[
            "link", "add", &host_link, "type", "veth", "peer", "name", "eth0", "netns", &netns,
        ]);
        ip(&["addr", "add", &format!("{host_ip}/30"), "dev", &host_link]);
        ip(&["link", "set", &host_link, "up"]);
        let inside = |args: &[&str]| {
            let mut all = vec!["netns", "exec", &netns, "ip"];
            all.extend_from_slice(args);
            ip(&all);
        };
        inside(&["addr", "add", &format!("{pod_ip}/30"), "dev", "eth0"]);
        inside(&["link", "set", "eth0", "up"]);
        inside(&["link", "set", "lo", "up"]);
        inside(&["route", "add", "default", "via", &host_ip]);
        PodNetwork {
            netns,
            host_link,
            pod_ip,
        }
    }
}

impl Drop for PodNetwork {
    fn drop(&mut self) {
        let _ = Command::new("ip")
            .args(["link", "del", &self.host_link])
            .output();
        let _ = Command::new("ip")
            .args(["netns", "del", &self.netns])
            .output();
    }
}

/// Writes `files` into `dir` as the kubelet's atomic writer does for a ConfigMap or projected
/// volume: a timestamped directory, `..data` pointing at it, one symlink per file; files of
/// `mode` (the volume's `defaultMode`, 0644 unless set), owned by root and the pod's fsGroup.
pub fn write_volume(
    dir: &Path,
    files: &BTreeMap<String, String>,
    fs_group: Option<u32>,
    mode: u32,
) {
    std::fs::create_dir_all(dir).unwrap();
    let version = format!(
        "..{}",
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    );
    let data = dir.join(&version);
    std::fs::create_dir(&data).unwrap();
    for (name, content) in files {
        let file = data.join(name);
        std::fs::write(&file, content).unwrap();
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(mode)).unwrap();
        if let Some(group) = fs_group {
            std::os::unix::fs::chown(&file, Some(0), Some(group)).unwrap();
        }
    }
    let link = dir.join("..data_tmp");
    let _ = std::fs::remove_file(&link);
    std::os::unix::fs::symlink(&version, &link).unwrap();
    std::fs::rename(&link, dir.join("..data")).unwrap();
    for name in files.keys() {
        let file = dir.join(name);
        if std::fs::symlink_metadata(&file).is_err() {
            std::os::unix::fs::symlink(format!("..data/{name}"), &file).unwrap();
        }
    }
    if let Some(group) = fs_group {
        std::os::unix::fs::chown(dir, Some(0), Some(group)).unwrap();
    }
}

/// What a test changes about a pod before it starts: the files of its volumes, the token, the
/// API server's address.
pub struct PodFiles {
    /// volume name -> files (from the rendered ConfigMaps)
    pub volumes: BTreeMap<String, BTreeMap<String, String>>,
    /// the service account directory's files (token, ca.crt, namespace)
    pub token_dir: BTreeMap<String, String>,
    pub service_port: u16,
    /// the mode of the ConfigMap volumes' files (`defaultMode`)
    pub file_mode: u32,
}

/// One container of the Deployment, run by podman in its own network namespace.
pub struct Pod {
    pub name: String,
    pub net: PodNetwork,
    pub dir: PathBuf,
    pub run: PodRun,
    started: Instant,
}

pub fn podman() -> Command {
    let mut cmd = Command::new("podman");
    cmd.args(["--runtime", "runc", "--cgroup-manager=cgroupfs"]);
    cmd
}

impl Pod {
    /// Starts the container as the kubelet would for `run`, in network namespace `index`.
    pub fn start(name: &str, index: u8, run: &PodRun, files: &PodFiles) -> Pod {
        let net = PodNetwork::new(index);
        let dir = scratch(name);
        let _ = podman()
            .args(["rm", "--force", "--time", "0", name])
            .output();
        let mut cmd = podman();
        cmd.args([
            "run",
            "--detach",
            "--pull=never",
            "--name",
            name,
            "--hostname",
            name,
        ]);
        cmd.arg(format!("--network=ns:/run/netns/{}", net.netns));
        cmd.arg(format!("--user={}:{}", run.user, run.group));
        if let Some(group) = run.fs_group {
            cmd.arg(format!("--group-add={group}"));
        }
        if run.read_only_root {
            // the kubelet adds no writable /tmp or /run of its own
            cmd.args(["--read-only", "--read-only-tmpfs=false"]);
        }
        if run.drop_all_capabilities {
            cmd.arg("--cap-drop=ALL");
        }
        if !run.allow_privilege_escalation {
            cmd.args(["--security-opt", "no-new-privileges"]);
        }
        assert!(!run.privileged, "the chart asks for a privileged container");
        if !run.seccomp_runtime_default {
            // no seccompProfile (gardener-operator's Deployment sets none): a kubelet with its
            // default settings (`seccompDefault: false`) runs such a container unconfined
            cmd.args(["--security-opt", "seccomp=unconfined"]);
        }
        if let Some(limit) = &run.memory_limit {
            cmd.arg(format!("--memory={}", memory_bytes(limit)));
            cmd.arg(format!("--memory-swap={}", memory_bytes(limit)));
        }
        // Open files: this process's own limits, as a kubelet's runtime passes its own on
        // (podman's default of 1048576 is above this sandbox's hard limit and refused). Processes:
        // podman's default, 32768, given explicitly, since podman refuses to start here without it.
        cmd.args([
            "--ulimit",
            &own_nofile_limit(),
            "--ulimit",
            "nproc=32768:32768",
        ]);
        // what the kubelet puts into every container's environment for the `kubernetes` Service
        let port = files.service_port;
        for (key, value) in [
            ("KUBERNETES_SERVICE_HOST", SERVICE_IP.to_string()),
            ("KUBERNETES_SERVICE_PORT", port.to_string()),
            ("KUBERNETES_SERVICE_PORT_HTTPS", port.to_string()),
            ("KUBERNETES_PORT", format!("tcp://{SERVICE_IP}:{port}")),
        ] {
            cmd.arg(format!("--env={key}={value}"));
        }
        for (key, value) in &run.env {
            cmd.arg(format!("--env={key}={value}"));
        }
        for mount in &run.mounts {
            let source = dir.join("volumes").join(&mount.volume);
            write_volume(
                &source,
                &files.volumes[&mount.volume],
                run.fs_group,
                files.file_mode,
            );
            let ro = if mount.read_only { ":ro" } else { "" };
            cmd.arg(format!("--volume={}:{}{ro}", source.display(), mount.path));
        }
        if run.service_account_token {
            let source = dir.join("serviceaccount");
            write_volume(&source, &files.token_dir, run.fs_group, 0o644);
            cmd.arg(format!("--volume={}:{TOKEN_DIR}:ro", source.display()));
        }
        cmd.arg(&run.image).args(&run.args);
        run_cmd(&mut cmd);
        Pod {
            name: name.to_string(),
            net,
            dir,
            run: run.clone(),
            started: Instant::now(),
        }
    }

    pub fn since_start(&self) -> Duration {
        self.started.elapsed()
    }

    pub fn logs(&self) -> String {
        let out = podman()
            .args(["logs", &self.name])
            .output()
            .expect("podman logs");
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    }

    /// The container's state: running, and its exit code once it has exited.
    pub fn state(&self) -> (bool, Option<i32>) {
        let out = podman()
            .args([
                "inspect",
                "--format",
                "{{.State.Running}} {{.State.ExitCode}}",
                &self.name,
            ])
            .output()
            .expect("podman inspect");
        let text = String::from_utf8_lossy(&out.stdout);
        let mut words = text.split_whitespace();
        let running = words.next() == Some("true");
        let code = words.next().and_then(|c| c.parse().ok());
        (running, if running { None } else { code })
    }

    /// `podman inspect` of the container, as JSON.
    pub fn inspect(&self) -> serde_json::Value {
        let out = run_cmd(podman().args(["inspect", &self.name]));
        let all: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        all[0].clone()
    }

    /// An HTTP GET of the pod's `port` and `path`, as the kubelet probes: the answer within
    /// `timeout`, or None.
    pub fn get(&self, port: u16, path: &str, timeout: Duration) -> Option<(u16, String)> {
        http_get(&format!("{}:{port}", self.net.pod_ip), path, timeout)
    }

    /// Whether a probe succeeds now: an answer of 200..399 within the probe's timeout.
    pub fn probe(&self, probe: &crate::pod::Probe) -> Option<(u16, String)> {
        self.get(probe.port, &probe.path, Duration::from_secs(probe.timeout))
    }

    /// The kubelet's stop: SIGTERM, then SIGKILL after the grace period. Returns how long the
    /// container took and its exit code.
    pub fn stop(&self) -> (Duration, i32) {
        let start = Instant::now();
        run_cmd(podman().args([
            "stop",
            "--time",
            &self.run.grace_seconds.to_string(),
            &self.name,
        ]));
        let took = start.elapsed();
        let code = self.state().1.expect("the container has exited");
        (took, code)
    }
}

impl Drop for Pod {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("--- logs of {} ---\n{}", self.name, self.logs());
        }
        let _ = podman()
            .args(["rm", "--force", "--time", "0", &self.name])
            .output();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// `--ulimit` for open files at this process's own soft and hard limits.
fn own_nofile_limit() -> String {
    use nix::sys::resource::{Resource, getrlimit};
    let (soft, hard) = getrlimit(Resource::RLIMIT_NOFILE).expect("getrlimit");
    format!("nofile={soft}:{hard}")
}

fn run_cmd(cmd: &mut Command) -> Output {
    cmd.stdin(Stdio::null());
    run(cmd)
}

/// A plain HTTP/1.0 GET; the status and body, or None when nothing answers within `timeout`.
pub fn http_get(addr: &str, path: &str, timeout: Duration) -> Option<(u16, String)> {
    let addr: SocketAddr = addr.parse().unwrap();
    let mut stream = TcpStream::connect_timeout(&addr, timeout).ok()?;
    stream.set_read_timeout(Some(timeout)).ok()?;
    stream.set_write_timeout(Some(timeout)).ok()?;
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {addr}\r\n\r\n").ok()?;
    let mut answer = String::new();
    stream.read_to_string(&mut answer).ok()?;
    let status = answer.split_whitespace().nth(1)?.parse().ok()?;
    let body = answer.split_once("\r\n\r\n").map(|(_, b)| b.to_string())?;
    Some((status, body))
}

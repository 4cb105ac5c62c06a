//! The process at landscape scale: the release binary against the test API server holding 1,000
//! seeds and N realistic shoots (see `realistic`). Per row: start to synced caches and to the
//! first bind, resident memory, what the initial list costs, a burst of new shoots at the
//! default client limit and without one, and a relist forced by a 410.
//!
//! A row runs against the API server with its watch cache off, so that compacting etcd makes the
//! next watch of the scheduler from its last resourceVersion answer 410 (as a watch cache that
//! has moved past it does), and every list is served by etcd page by page; or with the watch
//! cache on, as production API servers run (start and burst only: no relist). The shoots are written into
//! etcd directly (transactions of [`PER_TXN`] puts through its JSON gateway): building the
//! landscape is not the scheduler's time and is reported apart.

use std::collections::HashMap;
use std::io::BufRead;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::{StreamExt, TryStreamExt};
use gardener_scheduler::api::{ConfigMap, Shoot};
use kube::api::{Api, DynamicObject, PostParams};
use kube::runtime::{WatchStreamExt, watcher};
use serde_json::json;

use super::harness::{self, ApiServer, Scheduler, SchedulerOptions};
use super::realistic;

/// Puts per etcd transaction: below etcd's default limits of 128 operations and 1.5 MiB.
const PER_TXN: usize = 100;
/// Projects the bound shoots are spread over.
const PROJECTS: usize = 200;
/// The project of the shoots created during the run (probe, burst, drip).
const NEW: &str = "bench";
/// Memory the machine keeps free for others while the landscape is built.
const KEEP_FREE_KIB: u64 = 6 * 1024 * 1024;

/// What one row measures.
pub struct ScaleSpec {
    pub seeds: usize,
    pub shoots: usize,
    /// new pending shoots created at once, per scheduler run
    pub burst: usize,
    /// the API server keeps its watch cache (the default); off, etcd serves every list and a
    /// compaction forces the relist
    pub watch_cache: bool,
    /// `schedulers.shoot.listPageSize` of each run at the default client limit, in order;
    /// `None`: the scheduler's default. The first run is also the one that relists.
    pub pages: Vec<Option<u32>>,
    /// one more run without a client limit (at the first page size)
    pub no_limit: bool,
    /// a new shoot every 100 ms while the relist runs (pending at its end, so counted in its
    /// peak)
    pub drip: bool,
    /// how the scheduler lists, per page size, in order: `true` streaming (the default), `false`
    /// pages (`streamingLists: false`). The first run is the one that relists.
    pub modes: Vec<bool>,
    /// after the runs: two replicas with leader election, the leader killed (SIGKILL)
    pub failover: bool,
}

/// How long the same API server takes to hand the same shoots to a bare client that does
/// nothing else with them, measured just before a scheduler's start.
#[derive(Clone, Copy, Default)]
pub struct Floor {
    /// a paged list at the run's page size, each page read to its end, the next asked at once
    pub paged: Duration,
    pub paged_requests: usize,
    pub paged_bytes: u64,
    /// a streaming watch read to its `k8s.io/initial-events-end` bookmark
    pub streaming: Duration,
    pub streaming_bytes: u64,
    /// the bare client's CPU time (user + system) for the stream: what reading the same bytes
    /// over TLS costs a process that decodes nothing
    pub streaming_cpu: Duration,
}

/// The standby's takeover after the leader is killed.
pub struct Failover {
    /// kill → the standby's first bind of a shoot created right after the kill
    pub to_bind: Duration,
    pub lease_duration: Duration,
    /// lists of shoots the standby began after the kill (from its `lists_total`)
    pub standby_lists: f64,
    /// GET requests of the standby after the kill up to its bind (watches, reads)
    pub standby_gets: f64,
    /// binds both replicas made
    pub binds: f64,
    pub load: String,
}

/// Resource use of a process, from /proc.
#[derive(Clone, Copy, Default)]
pub struct Proc {
    pub rss_kib: u64,
    /// of `rss_kib`: anonymous memory (heap, stacks) and mapped files (the binary, libraries)
    pub anon_kib: u64,
    pub file_kib: u64,
    pub hwm_kib: u64,
    /// user + system CPU time
    pub cpu: Duration,
    pub threads: u64,
}

/// One scheduler process from start.
pub struct ProcessRun {
    pub label: String,
    /// how the shoot feed listed, from the scheduler's `lists_total` (`streaming`, `paged`)
    pub mode: String,
    pub floor: Floor,
    /// `schedulers.shoot.listPageSize`, if set
    pub page: Option<u32>,
    pub to_synced: Duration,
    pub to_first_bind: Duration,
    /// at synced caches: peak RSS so far (the initial list), CPU and bytes read
    pub at_synced: Proc,
    /// GET requests (lists, watches) up to synced caches
    pub list_requests: f64,
    /// CPU time of the API server and of etcd from start to synced caches
    pub server_cpu: Duration,
    /// RSS a few seconds after the first bind, nothing to do
    pub steady: Proc,
    pub burst: Vec<Duration>,
    pub burst_bound: usize,
    /// first create sent → last create answered, and → last bind seen
    pub creates_took: Duration,
    pub burst_span: Duration,
    pub after_burst: Proc,
    pub load: String,
}

/// The relist after a 410 on the shoot watch.
pub struct Relist {
    pub took: Duration,
    /// compaction → the relist began (the watch's next restart)
    pub waited: Duration,
    pub requests: f64,
    /// RSS when it began, and its peak while it ran (VmHWM reset at the compaction)
    pub began_kib: u64,
    pub peak_kib: u64,
    pub cpu: Duration,
    /// create → bound of shoots created while it ran
    pub drip: Vec<Duration>,
    pub drip_created: usize,
    pub load: String,
}

pub struct ScaleRow {
    pub shoots: usize,
    pub watch_cache: bool,
    pub avg_json_bytes: usize,
    pub build: Duration,
    pub runs: Vec<ProcessRun>,
    pub relist: Option<Relist>,
    /// placements the scheduler counts after the relist, and how many it should
    pub counted: (f64, usize),
    /// peak RSS of the initial list of the run that relisted, to compare the relist's with
    pub relist_initial_peak_kib: u64,
    pub relist_mode: String,
    pub failover: Option<Failover>,
    /// shoots of the run's own project bound to a second seed, and left unbound
    pub bound_twice: usize,
    pub unbound: usize,
    /// binds the scheduler made, and shoots it had to bind
    pub binds: (f64, usize),
    pub apiserver_kib: u64,
    pub etcd_kib: u64,
}

/// CPU time of the calling thread.
fn thread_cpu() -> Duration {
    let t = nix::time::clock_gettime(nix::time::ClockId::CLOCK_THREAD_CPUTIME_ID)
        .expect("thread CPU clock");
    Duration::new(t.tv_sec() as u64, t.tv_nsec() as u32)
}

/// CPU time per shoot of decoding list pages of `page` realistic bound shoots, `rounds` times:
/// as the watch does now (typed straight from the page's bytes), and as it did before (each
/// object untyped first, converted to a JSON tree, then typed from that).
pub fn decode_cost(page: usize, rounds: usize) -> (usize, Duration, Duration) {
    use gardener_scheduler::controller::{WatchedShoot, Wire, decode};
    let items: Vec<serde_json::Value> = (0..page)
        .map(|i| {
            realistic::shoot(
                &format!("p{:03}", i % PROJECTS),
                &format!("s-{i:06}"),
                Some("seed-0001"),
                i,
            )
        })
        .collect();
    // the shoots as a streamed list sends them: one event a line, its type first
    let lines: Vec<String> = items
        .iter()
        .map(|o| format!(r#"{{"type":"ADDED","object":{o}}}"#))
        .collect();
    let text = json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "ShootList",
                      "metadata": {"resourceVersion": "1"}, "items": items})
    .to_string();
    let shoots = (page * rounds) as u32;
    let start = thread_cpu();
    for _ in 0..rounds {
        for line in &lines {
            std::hint::black_box(WatchedShoot::read_event(line.as_bytes()).unwrap());
        }
    }
    let now = (thread_cpu() - start) / shoots;
    let start = thread_cpu();
    for _ in 0..rounds {
        let list: kube::core::ObjectList<DynamicObject> = serde_json::from_str(&text).unwrap();
        for mut o in list.items {
            o.metadata.managed_fields = None;
            std::hint::black_box(decode::<Shoot>(o).unwrap());
        }
    }
    let before = (thread_cpu() - start) / shoots;
    (text.len() / page, now, before)
}

pub fn loadavg() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

/// A number of /proc/PID/status (`VmRSS:` in KiB, `Threads:`).
fn status_number(pid: u32, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn clock_ticks() -> u64 {
    std::process::Command::new("getconf")
        .arg("CLK_TCK")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(100)
}

pub fn proc_of(pid: u32) -> Proc {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    // fields after the command's closing parenthesis; utime and stime are the 14th and 15th
    let rest = stat.rsplit_once(") ").map(|(_, r)| r).unwrap_or("");
    let f: Vec<u64> = rest
        .split_whitespace()
        .map(|x| x.parse().unwrap_or(0))
        .collect();
    let ticks = f.get(11).copied().unwrap_or(0) + f.get(12).copied().unwrap_or(0);
    Proc {
        rss_kib: status_number(pid, "VmRSS:"),
        anon_kib: status_number(pid, "RssAnon:"),
        file_kib: status_number(pid, "RssFile:"),
        hwm_kib: status_number(pid, "VmHWM:"),
        threads: status_number(pid, "Threads:"),
        cpu: Duration::from_secs_f64(ticks as f64 / clock_ticks() as f64),
    }
}

fn mem_available_kib() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("MemAvailable:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

fn pid_in(state: &Path, file: &str) -> u32 {
    std::fs::read_to_string(state.join(file))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0)
}

/// Writes `shoots` bound shoots into etcd, `PER_TXN` per transaction from a few threads.
/// Returns the average JSON size. Panics when the machine runs short of memory.
fn load_etcd(api: &ApiServer, seeds: usize, shoots: usize) -> usize {
    let url = std::fs::read_to_string(api.state.join("etcd-client-url")).unwrap();
    let port: u16 = url.trim().rsplit(':').next().unwrap().parse().unwrap();
    let threads = 4;
    let bytes = Arc::new(Mutex::new(0usize));
    std::thread::scope(|s| {
        for t in 0..threads {
            let bytes = bytes.clone();
            s.spawn(move || {
                let mut batch = Vec::with_capacity(PER_TXN);
                let mut sent = 0usize;
                let flush = |batch: &mut Vec<String>| {
                    if batch.is_empty() {
                        return;
                    }
                    let body = format!(r#"{{"success":[{}]}}"#, batch.join(","));
                    let (status, answer) = harness::http_post(port, "/v3/kv/txn", &body)
                        .expect("etcd answers on its client port");
                    assert_eq!(status, 200, "etcd txn: {answer}");
                    batch.clear();
                };
                for i in (t..shoots).step_by(threads) {
                    let project = format!("p{:03}", i % PROJECTS);
                    let name = format!("s-{i:06}");
                    let seed = format!("seed-{:04}", i % seeds);
                    let obj = realistic::shoot(&project, &name, Some(&seed), i);
                    let value = obj.to_string();
                    sent += value.len();
                    let key = format!("/e2e/core.gardener.cloud/shoots/garden-{project}/{name}");
                    batch.push(format!(
                        r#"{{"requestPut":{{"key":"{}","value":"{}"}}}}"#,
                        realistic::base64(key.as_bytes()),
                        realistic::base64(value.as_bytes())
                    ));
                    if batch.len() == PER_TXN {
                        flush(&mut batch);
                        if t == 0 && mem_available_kib() < KEEP_FREE_KIB {
                            panic!(
                                "the machine has less than {} GiB available with {i} shoots written: this row does not fit",
                                KEEP_FREE_KIB / 1024 / 1024
                            );
                        }
                    }
                }
                flush(&mut batch);
                *bytes.lock().unwrap() += sent;
            });
        }
    });
    let total = *bytes.lock().unwrap();
    total / shoots.max(1)
}

fn gets(text: &str) -> f64 {
    harness::metric_sum(text, "rest_client_requests_total", &[("method", "GET")])
}

/// Waits until the log file `log` has a line with all of `words` after `from` bytes;
/// returns the offset after it.
fn wait_log(log: &Path, from: usize, words: &[&str], limit: Duration) -> Option<usize> {
    let start = Instant::now();
    while start.elapsed() < limit {
        if let Ok(f) = std::fs::File::open(log) {
            let mut r = std::io::BufReader::new(f);
            let mut offset = 0usize;
            let mut line = String::new();
            while r.read_line(&mut line).unwrap_or(0) > 0 {
                offset += line.len();
                if offset > from && words.iter().all(|w| line.contains(w)) {
                    return Some(offset);
                }
                line.clear();
            }
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    None
}

/// Binds seen on the shoots of the run's own project: first seed per shoot, and shoots seen on
/// a second seed.
#[derive(Default)]
struct Binds {
    first: HashMap<String, (String, Instant)>,
    twice: usize,
}

async fn watch_binds(client: kube::Client, binds: Arc<Mutex<Binds>>) {
    let api: Api<Shoot> = Api::namespaced(client, &format!("garden-{NEW}"));
    let stream = watcher(api, watcher::Config::default()).default_backoff();
    futures::pin_mut!(stream);
    while let Some(ev) = stream.try_next().await.transpose() {
        let shoot = match ev {
            Ok(watcher::Event::Apply(s) | watcher::Event::InitApply(s)) => s,
            _ => continue,
        };
        let (Some(name), Some(seed)) = (shoot.metadata.name.clone(), harness::seed_of(&shoot))
        else {
            continue;
        };
        let mut b = binds.lock().unwrap();
        match b.first.get(&name) {
            Some((first, _)) if first != seed => b.twice += 1,
            Some(_) => {}
            None => {
                b.first.insert(name, (seed.to_string(), Instant::now()));
            }
        }
    }
}

async fn create_pending(
    client: &kube::Client,
    names: Vec<String>,
    in_flight: usize,
) -> Vec<(String, Instant)> {
    let raw = harness::raw_ns::<Shoot>(client, &format!("garden-{NEW}"));
    futures::stream::iter(names.into_iter().enumerate())
        .map(|(i, name)| {
            let raw = raw.clone();
            async move {
                let obj: DynamicObject =
                    serde_json::from_value(realistic::shoot(NEW, &name, None, i)).unwrap();
                let sent = Instant::now();
                raw.create(&PostParams::default(), &obj)
                    .await
                    .unwrap_or_else(|e| panic!("creating shoot {name}: {e}"));
                (name, sent)
            }
        })
        .buffer_unordered(in_flight)
        .collect()
        .await
}

/// Waits until each of `created` is bound (at most `limit`); create → bound per bound shoot.
async fn latencies(
    binds: &Mutex<Binds>,
    created: &[(String, Instant)],
    limit: Duration,
) -> Vec<Duration> {
    let start = Instant::now();
    loop {
        let done = {
            let b = binds.lock().unwrap();
            created
                .iter()
                .filter(|(n, _)| b.first.contains_key(n))
                .count()
        };
        if done == created.len() || start.elapsed() > limit {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let b = binds.lock().unwrap();
    created
        .iter()
        .filter_map(|(n, sent)| {
            b.first
                .get(n)
                .map(|(_, at)| at.saturating_duration_since(*sent))
        })
        .collect()
}

/// Starts a scheduler (list page size, and whether it streams its lists) and measures its start,
/// steady state and a burst of `burst` shoots.
async fn process_run(
    api: &ApiServer,
    client: &kube::Client,
    binds: &Arc<Mutex<Binds>>,
    label: &str,
    rate: Option<(f32, i32)>,
    (page, streaming): (Option<u32>, bool),
    burst: usize,
) -> (Scheduler, ProcessRun) {
    let floor = floor(client, page.unwrap_or(500)).await;
    let probe = format!("probe-{label}");
    create_pending(client, vec![probe.clone()], 1).await;
    let probe_api: Api<Shoot> = Api::namespaced(client.clone(), &format!("garden-{NEW}"));
    let server = [
        pid_in(&api.state, "apiserver.pid"),
        pid_in(&api.state, "etcd.pid"),
    ];
    let server_cpu = || server.iter().map(|p| proc_of(*p).cpu).sum::<Duration>();
    let server_before = server_cpu();
    let mut server_at_synced = Duration::ZERO;
    let started = Instant::now();
    let mut env = vec![("MALLOC_ARENA_MAX", "1".to_string())];
    if let Some(page) = page {
        env.push((
            "GARDENER_SCHEDULER_SCHEDULERS__SHOOT__LIST_PAGE_SIZE",
            page.to_string(),
        ));
    }
    if !streaming {
        env.push((
            "GARDENER_SCHEDULER_SCHEDULERS__SHOOT__STREAMING_LISTS",
            "false".to_string(),
        ));
    }
    // BENCH_SCALE_HEAPTRACK=DIR: every allocation of the process, raw, into DIR (heaptrack's
    // preload library; `heaptrack_interpret` turns the file into what `heaptrack_print` reads)
    if let Some(dir) = std::env::var_os("BENCH_SCALE_HEAPTRACK") {
        env.push((
            "LD_PRELOAD",
            "/usr/lib/heaptrack/libheaptrack_preload.so".to_string(),
        ));
        let out = Path::new(&dir).join(format!("heaptrack-{label}.raw"));
        env.push(("DUMP_HEAPTRACK_OUTPUT", out.display().to_string()));
    }
    // BENCH_SCALE_PPROF=DIR: a CPU profile of the API server over the first
    // BENCH_SCALE_PPROF_SECONDS (default 30) of the start, from its /debug/pprof/profile
    let mut pprof = std::env::var_os("BENCH_SCALE_PPROF").map(|dir| {
        let seconds = std::env::var("BENCH_SCALE_PPROF_SECONDS").unwrap_or_else(|_| "30".into());
        let kubeconfig = std::fs::read_to_string(&api.kubeconfig).unwrap();
        let server = kubeconfig
            .lines()
            .find_map(|l| l.split("server: \"").nth(1))
            .and_then(|l| l.split('"').next())
            .expect("the server in the kubeconfig");
        std::process::Command::new("curl")
            .args(["-sk", "-H", "Authorization: Bearer e2e-any-token", "-o"])
            .arg(Path::new(&dir).join(format!("pprof-{label}.pb.gz")))
            .arg(format!("{server}/debug/pprof/profile?seconds={seconds}"))
            .spawn()
            .expect("starting curl")
    });
    let mut scheduler = Scheduler::start(
        api,
        label,
        SchedulerOptions {
            client_rate: rate,
            rust_log: Some("info"),
            env,
            ..Default::default()
        },
    );
    let pid = scheduler.pid();
    // BENCH_SCALE_SMAPS=DIR: the process's memory map and status at synced caches, when steady
    // and after the burst, into DIR (what each mapping holds: heap, thread stacks, files)
    let smaps = |stage: &str| {
        if let Some(dir) = std::env::var_os("BENCH_SCALE_SMAPS") {
            for what in ["smaps", "status"] {
                let _ = std::fs::copy(
                    format!("/proc/{pid}/{what}"),
                    Path::new(&dir).join(format!("{what}-{label}-{stage}.txt")),
                );
            }
        }
    };
    // BENCH_SCALE_PERF=DIR: a CPU profile of the start, up to synced caches, into DIR
    let mut perf = std::env::var_os("BENCH_SCALE_PERF").map(|dir| {
        let out = Path::new(&dir).join(format!("perf-{label}.data"));
        std::process::Command::new("perf")
            .args(["record", "-e", "cpu-clock", "-F", "499", "-g", "-o"])
            .arg(&out)
            .args(["-p", &pid.to_string()])
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("starting perf record")
    });
    let (mut to_synced, mut to_first_bind) = (None, None);
    let (mut at_synced, mut list_requests) = (Proc::default(), 0.0);
    let mut mode = String::new();
    while to_synced.is_none() || to_first_bind.is_none() {
        assert!(
            scheduler.is_running(),
            "{label} exited:\n{}",
            scheduler.logs()
        );
        assert!(
            started.elapsed() < Duration::from_secs(600),
            "{label}: not synced and bound within 10 minutes"
        );
        if to_synced.is_none()
            && matches!(
                harness::http_get(scheduler.health_port, "/readyz"),
                Some((200, _))
            )
        {
            to_synced = Some(started.elapsed());
            at_synced = proc_of(pid);
            smaps("synced");
            server_at_synced = server_cpu() - server_before;
            list_requests = gets(&scheduler.metrics());
            mode = shoot_list_mode(&scheduler.metrics());
            if let Some(mut p) = perf.take() {
                let _ = std::process::Command::new("kill")
                    .args(["-INT", &p.id().to_string()])
                    .status();
                let _ = p.wait();
            }
        }
        if to_first_bind.is_none()
            && probe_api
                .get(&probe)
                .await
                .ok()
                .is_some_and(|s| harness::seed_of(&s).is_some())
        {
            to_first_bind = Some(started.elapsed());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    if let Some(mut p) = pprof.take() {
        let _ = tokio::task::spawn_blocking(move || p.wait()).await;
    }
    tokio::time::sleep(Duration::from_secs(5)).await;
    let steady = proc_of(pid);
    smaps("steady");
    let load = loadavg();
    let names: Vec<String> = (0..burst).map(|i| format!("{label}-{i:04}")).collect();
    let burst_start = Instant::now();
    let created = create_pending(client, names, 64).await;
    let creates_took = burst_start.elapsed();
    let lat = latencies(binds, &created, Duration::from_secs(300)).await;
    let burst_span = {
        let b = binds.lock().unwrap();
        created
            .iter()
            .filter_map(|(n, _)| b.first.get(n).map(|(_, at)| *at))
            .max()
            .map_or(Duration::ZERO, |last| last - burst_start)
    };
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after_burst = proc_of(pid);
    smaps("after-burst");
    let run = ProcessRun {
        label: label.to_string(),
        mode,
        floor,
        page,
        to_synced: to_synced.unwrap(),
        to_first_bind: to_first_bind.unwrap(),
        at_synced,
        list_requests,
        server_cpu: server_at_synced,
        steady,
        burst_bound: lat.len(),
        creates_took,
        burst_span,
        burst: lat,
        after_burst,
        load,
    };
    (scheduler, run)
}

/// How the shoot feed listed, from `lists_total`: the modes it used, `+`-joined.
fn shoot_list_mode(metrics: &str) -> String {
    ["streaming", "paged"]
        .into_iter()
        .filter(|m| {
            harness::metric_sum(
                metrics,
                "gardener_scheduler_lists_total",
                &[("kind", "Shoot"), ("mode", m)],
            ) > 0.0
        })
        .collect::<Vec<_>>()
        .join("+")
}

/// The API server's floor for the shoots: a bare client lists them in pages of `page`, then
/// streams them, reading every byte and decoding nothing but what the next request needs (the
/// `continue` token) and the end marker.
async fn floor(client: &kube::Client, page: u32) -> Floor {
    use http_body_util::BodyExt;
    let path = "/apis/core.gardener.cloud/v1beta1/shoots";
    let get = |uri: String| {
        http::Request::get(uri)
            .body(kube::client::Body::empty())
            .unwrap()
    };
    let mut f = Floor::default();
    let start = Instant::now();
    let mut token: Option<String> = None;
    loop {
        let uri = match &token {
            None => {
                // as kube asks (and the scheduler with it): a first page at resourceVersion 0
                // would be served whole from the watch cache, whatever the limit
                format!("{path}?limit={page}")
            }
            Some(t) => format!("{path}?limit={page}&continue={t}"),
        };
        let res = client
            .send(get(uri))
            .await
            .expect("a page of the floor's list");
        assert!(res.status().is_success(), "floor list: {}", res.status());
        let mut body = res.into_body();
        // the token is in the list's metadata, at its end (or at its start)
        let (mut head, mut tail) = (Vec::new(), Vec::new());
        while let Some(frame) = body.frame().await {
            let Ok(data) = frame.expect("the floor's page").into_data() else {
                continue;
            };
            f.paged_bytes += data.len() as u64;
            if head.len() < 4096 {
                head.extend_from_slice(&data[..data.len().min(4096 - head.len())]);
            }
            tail.extend_from_slice(&data);
            if tail.len() > 8192 {
                tail.drain(..tail.len() - 4096);
            }
        }
        f.paged_requests += 1;
        token = [&tail, &head].iter().find_map(|b| continue_token(b));
        if token.is_none() {
            break;
        }
    }
    f.paged = start.elapsed();
    let start = Instant::now();
    let cpu = proc_of(std::process::id()).cpu;
    let uri = format!(
        "{path}?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&resourceVersion=0&allowWatchBookmarks=true&timeoutSeconds=600"
    );
    let res = client.send(get(uri)).await.expect("the floor's stream");
    assert!(res.status().is_success(), "floor stream: {}", res.status());
    let mut body = res.into_body();
    let marker = b"k8s.io/initial-events-end";
    let finder = memchr::memmem::Finder::new(marker);
    // the end of the last frame, in case the marker spans two
    let mut carry: Vec<u8> = Vec::new();
    'read: while let Some(frame) = body.frame().await {
        let Ok(data) = frame.expect("the floor's stream").into_data() else {
            continue;
        };
        f.streaming_bytes += data.len() as u64;
        carry.extend_from_slice(&data[..data.len().min(marker.len())]);
        if finder.find(&carry).is_some() || finder.find(&data).is_some() {
            break 'read;
        }
        carry.clear();
        carry.extend_from_slice(&data[data.len().saturating_sub(marker.len())..]);
    }
    f.streaming = start.elapsed();
    f.streaming_cpu = proc_of(std::process::id()).cpu.saturating_sub(cpu);
    f
}

/// The `continue` token in a list's JSON, URL-encoded; `None` on the last page.
fn continue_token(json: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(json);
    let at = text.find("\"continue\":\"")? + "\"continue\":\"".len();
    let token = &text[at..at + text[at..].find('"')?];
    (!token.is_empty()).then(|| {
        token
            .bytes()
            .map(|b| match b {
                b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                    (b as char).to_string()
                }
                _ => format!("%{b:02X}"),
            })
            .collect()
    })
}

/// Two replicas with leader election over the landscape: once both are ready and the leader
/// has bound a probe, the leader is killed (SIGKILL) and a shoot created; the standby's bind
/// of it is timed from the kill, and its lists after the kill counted.
async fn failover(api: &ApiServer, client: &kube::Client, binds: &Arc<Mutex<Binds>>) -> Failover {
    // upstream's defaults: 15 s / 10 s / 2 s
    let lease_duration = Duration::from_secs(15);
    let start = |name: &'static str| {
        Scheduler::start(
            api,
            name,
            SchedulerOptions {
                leader_elect: true,
                lease: harness::LeaseTimes::Defaults,
                hostname: Some(name),
                rust_log: Some("info"),
                env: vec![("MALLOC_ARENA_MAX", "1".to_string())],
                ..Default::default()
            },
        )
    };
    let mut first = start("failover-a");
    let mut second = start("failover-b");
    let probe = "probe-failover".to_string();
    create_pending(client, vec![probe.clone()], 1).await;
    let _ = latencies(binds, &[(probe, Instant::now())], Duration::from_secs(900)).await;
    let ready =
        |s: &Scheduler| matches!(harness::http_get(s.health_port, "/readyz"), Some((200, _)));
    let begun = Instant::now();
    while !(ready(&first) && ready(&second)) {
        assert!(
            begun.elapsed() < Duration::from_secs(900),
            "both replicas ready within 15 minutes"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    let leads =
        |s: &Scheduler| harness::metric_sum(&s.metrics(), "gardener_scheduler_leader", &[]) > 0.0;
    let (leader, standby) = if leads(&first) {
        (&mut first, &mut second)
    } else {
        (&mut second, &mut first)
    };
    let lists_before = harness::metric_sum(
        &standby.metrics(),
        "gardener_scheduler_lists_total",
        &[("kind", "Shoot")],
    );
    let gets_before = gets(&standby.metrics());
    let scheduled = |m: &str| {
        harness::metric_sum(
            m,
            "gardener_scheduler_schedule_attempts_total",
            &[("result", "scheduled")],
        )
    };
    // what the leader bound (the probe), read before it dies
    let leader_binds = scheduled(&leader.metrics());
    leader.kill();
    let killed = Instant::now();
    let created = create_pending(client, vec!["after-failover".to_string()], 1).await;
    let _ = latencies(binds, &created, Duration::from_secs(120)).await;
    let to_bind = binds
        .lock()
        .unwrap()
        .first
        .get("after-failover")
        .map(|(_, at)| at.saturating_duration_since(killed))
        .expect("the standby bound the shoot created after the kill within 2 minutes");
    let metrics = standby.metrics();
    Failover {
        to_bind,
        lease_duration,
        standby_lists: harness::metric_sum(
            &metrics,
            "gardener_scheduler_lists_total",
            &[("kind", "Shoot")],
        ) - lists_before,
        standby_gets: gets(&metrics) - gets_before,
        binds: leader_binds + scheduled(&metrics),
        load: loadavg(),
    }
}

/// Compacts etcd past every shoot event the scheduler saw; its shoot watch, restarted at the
/// next timeout, gets 410 and lists again. Shoots created meanwhile measure whether binding
/// stops.
async fn relist(
    api: &ApiServer,
    client: &kube::Client,
    binds: &Arc<Mutex<Binds>>,
    scheduler: &Scheduler,
    drip_shoots: bool,
) -> Relist {
    let pid = scheduler.pid();
    let log_from = std::fs::metadata(&scheduler.log)
        .map(|m| m.len() as usize)
        .unwrap_or(0);
    // a write of another kind moves etcd's revision past the last shoot event
    harness::create(
        &harness::raw_ns::<ConfigMap>(client, "garden"),
        json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "bench-revision"}, "data": {"a": "b"}}),
    )
    .await;
    api.compact_etcd();
    let compacted = Instant::now();
    let _ = std::fs::write(format!("/proc/{pid}/clear_refs"), "5");
    let log = scheduler.log.clone();
    let shadow = log.clone();
    let began = tokio::task::spawn_blocking(move || {
        wait_log(
            &shadow,
            log_from,
            &["listing again", "Shoot"],
            Duration::from_secs(120),
        )
    })
    .await
    .unwrap()
    .expect("the shoot watch listed again within 2 minutes of the compaction");
    let at_begin = Instant::now();
    let before = proc_of(pid);
    let requests_before = gets(&scheduler.metrics());
    // a shoot every 100 ms while the relist runs
    let shadow = log.clone();
    let mut ended = tokio::task::spawn_blocking(move || {
        wait_log(
            &shadow,
            began,
            &["listed again", "Shoot"],
            Duration::from_secs(600),
        )
    });
    let mut drip = Vec::new();
    let mut k = 0;
    let end = loop {
        tokio::select! {
            r = &mut ended => break r.unwrap().map(|_| Instant::now()),
            _ = tokio::time::sleep(Duration::from_millis(100)), if drip_shoots => {
                drip.extend(create_pending(client, vec![format!("drip-{k:04}")], 1).await);
                k += 1;
            }
        }
    };
    let end = end.expect("the relist ended within 10 minutes");
    let after = proc_of(pid);
    let requests = gets(&scheduler.metrics()) - requests_before;
    let lat = latencies(binds, &drip, Duration::from_secs(120)).await;
    Relist {
        took: end - at_begin,
        waited: at_begin - compacted,
        requests,
        began_kib: before.rss_kib,
        peak_kib: after.hwm_kib,
        cpu: after.cpu.saturating_sub(before.cpu),
        drip_created: drip.len(),
        drip: lat,
        load: loadavg(),
    }
}

/// Waits until the API server's watch cache for shoots is ready (it fills it from etcd after the
/// bulk writes; meanwhile lists go to etcd and watches are refused): the scheduler then starts
/// against a server whose cache is warm, as a production API server's is, and its start does
/// not include the cache's.
async fn wait_for_watch_cache(client: &kube::Client) {
    let raw = harness::raw::<Shoot>(client);
    let start = Instant::now();
    loop {
        let rv = raw
            .list_metadata(&kube::api::ListParams::default().limit(1))
            .await
            .ok()
            .and_then(|l| l.metadata.resource_version);
        if let Some(rv) = rv {
            let params = kube::api::WatchParams::default().timeout(1);
            // a cache behind the list's resourceVersion answers with an error ("Too large
            // resource version"); a ready one watches quietly until the timeout
            if let Ok(events) = raw.watch(&params, &rv).await {
                let events: Vec<_> = events.collect().await;
                let served = events
                    .iter()
                    .all(|e| matches!(e, Ok(ev) if !matches!(ev, kube::api::WatchEvent::Error(_))));
                if served {
                    return;
                }
            }
        }
        assert!(
            start.elapsed() < Duration::from_secs(900),
            "the API server's watch cache was not ready within 15 minutes"
        );
        tokio::time::sleep(Duration::from_secs(2)).await;
    }
}

/// One row: builds the landscape, then runs the scheduler at the default client limit once per
/// page size (start, burst; the first also relists when the watch cache is off) and, if asked,
/// again without a limit (start, burst).
pub fn run(spec: &ScaleSpec) -> ScaleRow {
    let rt = tokio::runtime::Runtime::new().expect("tokio runtime");
    rt.block_on(async move {
        let flags: &[&str] = if spec.watch_cache { &[] } else { &["--watch-cache=false"] };
        let api = ApiServer::start_with_flags(&format!("bench-scale-{}", spec.shoots), flags);
        let client = api.client().await;
        let build = Instant::now();
        harness::base_landscape(&client, NEW).await;
        let per_seed = (spec.shoots / spec.seeds.max(1)) as u32 + 3 * spec.burst as u32;
        futures::stream::iter(0..spec.seeds)
            .map(|i| {
                let client = client.clone();
                async move { harness::create_seed(&client, &format!("seed-{i:04}"), per_seed, &[]).await }
            })
            .buffer_unordered(16)
            .collect::<Vec<_>>()
            .await;
        futures::stream::iter(0..PROJECTS)
            .map(|p| {
                let client = client.clone();
                async move {
                    let name = format!("p{p:03}");
                    harness::ensure_namespace(&client, &format!("garden-{name}")).await;
                    harness::create(
                        &harness::raw::<gardener_scheduler::api::Project>(&client),
                        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Project",
                               "metadata": {"name": name}, "spec": {"namespace": format!("garden-{name}")}}),
                    )
                    .await;
                }
            })
            .buffer_unordered(16)
            .collect::<Vec<_>>()
            .await;
        let avg_json_bytes = load_etcd(&api, spec.seeds, spec.shoots);
        let listed: serde_json::Value = {
            let raw = harness::raw::<Shoot>(&client);
            let list = raw
                .list_metadata(&kube::api::ListParams::default().limit(1))
                .await
                .expect("listing shoots");
            json!({"remaining": list.metadata.remaining_item_count, "items": list.items.len()})
        };
        let stored = listed["remaining"].as_i64().unwrap_or(0) + listed["items"].as_i64().unwrap_or(0);
        assert_eq!(stored as usize, spec.shoots, "the API server lists every shoot written into etcd");
        if spec.watch_cache {
            wait_for_watch_cache(&client).await;
        }
        let build = build.elapsed();

        let binds = Arc::new(Mutex::new(Binds::default()));
        let watch = tokio::spawn(watch_binds(client.clone(), binds.clone()));
        let mut runs = Vec::new();
        let mut relisted = None;
        let mut binds_made = 0.0;
        let first_mode = spec.modes.first().copied().unwrap_or(true);
        let unlimited = spec.no_limit.then_some((spec.pages[0], first_mode, "no-limit", Some((100_000.0, 100_000))));
        let limited = spec
            .pages
            .iter()
            .flat_map(|&page| spec.modes.iter().map(move |&m| (page, m, "qps-50", None)));
        for (i, (page, streaming, limit, rate)) in limited.chain(unlimited).enumerate() {
            let mode = if streaming { "streaming" } else { "paged" };
            let label = match page {
                Some(p) => format!("{limit}-page-{p}-{mode}"),
                None => format!("{limit}-{mode}"),
            };
            let (scheduler, run) =
                process_run(&api, &client, &binds, &label, rate, (page, streaming), spec.burst).await;
            let initial_peak = run.at_synced.hwm_kib;
            let run_mode = run.mode.clone();
            runs.push(run);
            if i == 0 && !spec.watch_cache {
                tokio::time::sleep(Duration::from_secs(3)).await;
                let relist = relist(&api, &client, &binds, &scheduler, spec.drip).await;
                let counted = harness::metric_sum(&scheduler.metrics(), "gardener_scheduler_seed_shoots", &[]);
                let expected = spec.shoots + 1 + spec.burst + relist.drip_created;
                relisted = Some((relist, (counted, expected), initial_peak, run_mode));
            }
            binds_made += harness::metric_sum(
                &scheduler.metrics(),
                "gardener_scheduler_schedule_attempts_total",
                &[("result", "scheduled")],
            );
        }
        let failover = if spec.failover {
            let f = failover(&api, &client, &binds).await;
            binds_made += f.binds;
            Some(f)
        } else {
            None
        };
        let apiserver_kib = status_number(pid_in(&api.state, "apiserver.pid"), "VmHWM:");
        let etcd_kib = status_number(pid_in(&api.state, "etcd.pid"), "VmHWM:");
        watch.abort();
        let drip = relisted.as_ref().map_or(0, |(r, ..)| r.drip_created);
        let new_shoots = runs.len() * (1 + spec.burst) + drip + if spec.failover { 2 } else { 0 };
        let b = binds.lock().unwrap();
        let (relist, counted, relist_initial_peak_kib, relist_mode) = match relisted {
            Some((r, c, p, m)) => (Some(r), c, p, m),
            None => (None, (0.0, 0), 0, String::new()),
        };
        let row = ScaleRow {
            shoots: spec.shoots,
            watch_cache: spec.watch_cache,
            avg_json_bytes,
            build,
            runs,
            counted,
            relist_initial_peak_kib,
            relist_mode,
            failover,
            bound_twice: b.twice,
            unbound: new_shoots.saturating_sub(b.first.len()),
            binds: (binds_made, new_shoots),
            relist,
            apiserver_kib,
            etcd_kib,
        };
        drop(b);
        drop(api);
        row
    })
}

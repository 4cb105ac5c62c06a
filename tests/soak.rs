//! A bounded soak run against a real API server: `make soak` (`SOAK_MINUTES`, default 10;
//! `SOAK_RATE` changes per second, default 5). Ignored by `cargo test`.
//!
//! Shoots and seeds are created, changed and deleted at a fixed rate while two replicas of the
//! scheduler binary run with leader election (upstream's lease settings), both through the fault
//! proxy (tests/support/fault_proxy.rs). Faults are injected during the churn on a fixed 3-minute
//! cycle: watches cut every 5 s, every open watch silenced (half-open connections), 429
//! `Retry-After: 2` on half the binds, lists and lease requests, an API-server restart; and once,
//! halfway through, the leader is killed (SIGKILL) and started again as a standby. Afterwards:
//! every shoot that had a fitting seed is bound, none was ever bound twice (recorded from a watch
//! of its own) or got two success events, no seed holds more shoots than it allocates (checked
//! every 30 s too), and the resident memory of the replica that ran throughout did not grow.

#[path = "support/mod.rs"]
mod support;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::StreamExt;
use kube::api::{Api, DeleteParams, DynamicObject, Patch, PatchParams, PostParams};
use kube::runtime::{WatchStreamExt, watcher};

use gardener_scheduler::api::{Seed, Shoot};
use support::fault_proxy::{Class, FaultProxy, Faults, Storm, Target};
use support::*;

const PROJECT: &str = "soak";
const NAMESPACE: &str = "garden-soak";
const TAINT: &str = "soak.gardener.cloud/maintenance";
/// Live shoots are kept between these bounds by the mix of creates and deletes.
const MIN_LIVE: usize = 80;
const MAX_LIVE: usize = 200;
const MAX_SEEDS: usize = 10;
const MIN_SEEDS: usize = 4;
/// Allowed RSS growth: half the start value plus this much.
const RSS_SLACK_KIB: u64 = 16 * 1024;

fn env_f64(name: &str, default: f64) -> f64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// xorshift64: a fixed, reproducible sequence of operations.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Every distinct `spec.seedName` each shoot had, in order, as a watch saw it.
type History = Arc<Mutex<HashMap<String, Vec<String>>>>;

fn record(client: &kube::Client) -> (History, tokio::task::JoinHandle<()>) {
    let seen: History = Arc::default();
    let api = kube::Api::<Shoot>::namespaced(client.clone(), NAMESPACE);
    let task = tokio::spawn({
        let seen = seen.clone();
        async move {
            // errors (the API server restarting) are retried with backoff, never the end
            watcher::watcher(api, watcher::Config::default())
                .default_backoff()
                .for_each(|ev| {
                    let seen = seen.clone();
                    async move {
                        if let Ok(watcher::Event::Apply(s) | watcher::Event::InitApply(s)) = ev {
                            let mut m = seen.lock().unwrap();
                            let h = m
                                .entry(s.metadata.name.clone().unwrap_or_default())
                                .or_default();
                            if let Some(seed) = seed_of(&s)
                                && h.last().map(String::as_str) != Some(seed)
                            {
                                h.push(seed.to_string());
                            }
                        }
                    }
                })
                .await;
        }
    });
    (seen, task)
}

struct SeedState {
    allocatable: u32,
    tainted: bool,
}

type Census = (BTreeMap<String, (u64, u64, bool)>, Vec<String>, u64);

/// Shoots per seed, pending shoots, and the free slots of untainted seeds, from the API;
/// `None` while the API server does not answer.
async fn census(client: &kube::Client) -> Option<Census> {
    let seeds = kube::Api::<Seed>::all(client.clone())
        .list(&Default::default())
        .await
        .ok()?;
    let shoots = kube::Api::<Shoot>::namespaced(client.clone(), NAMESPACE)
        .list(&Default::default())
        .await
        .ok()?
        .items;
    let mut per_seed: BTreeMap<String, (u64, u64, bool)> = seeds
        .iter()
        .map(|s| {
            let alloc = allocatable_shoots(s);
            let tainted = s.spec.taints.iter().any(|t| t.key == TAINT);
            (s.metadata.name.clone().unwrap(), (0, alloc, tainted))
        })
        .collect();
    let mut pending = Vec::new();
    for s in &shoots {
        match seed_of(s) {
            Some(seed) => {
                if let Some(e) = per_seed.get_mut(seed) {
                    e.0 += 1;
                }
            }
            None => pending.push(s.metadata.name.clone().unwrap()),
        }
    }
    let free = per_seed
        .values()
        .filter(|(_, _, tainted)| !tainted)
        .map(|(n, alloc, _)| alloc.saturating_sub(*n))
        .sum();
    Some((per_seed, pending, free))
}

/// Fallible versions of the support builders: during an API-server restart a change fails, is
/// counted, and the churn goes on.
async fn try_create_shoot(client: &kube::Client, name: &str) -> kube::Result<()> {
    let obj: DynamicObject = serde_json::from_value(shoot_manifest(PROJECT, name)).unwrap();
    raw_ns::<Shoot>(client, NAMESPACE)
        .create(&PostParams::default(), &obj)
        .await
        .map(drop)
}

async fn try_create_seed(client: &kube::Client, name: &str, shoots: u32) -> kube::Result<()> {
    let obj: DynamicObject = serde_json::from_value(serde_json::json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Seed",
        "metadata": {"name": name},
        "spec": {"provider": {"type": "local", "region": "local-1", "zones": ["0", "1", "2"]},
                 "networks": {"nodes": "172.18.0.0/16", "pods": "10.1.0.0/16", "services": "10.2.0.0/16"},
                 "settings": {"scheduling": {"visible": true}}}}))
    .unwrap();
    raw::<Seed>(client)
        .create(&PostParams::default(), &obj)
        .await?;
    try_set_seed_status(client, name, shoots).await
}

async fn try_seed_taints(client: &kube::Client, name: &str, tainted: bool) -> kube::Result<()> {
    let taints: Vec<serde_json::Value> = if tainted {
        vec![serde_json::json!({"key": TAINT})]
    } else {
        vec![]
    };
    raw::<Seed>(client)
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(&serde_json::json!({"spec": {"taints": taints}})),
        )
        .await
        .map(drop)
}

/// One step of the fault cycle.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Fault {
    CutWatches,
    Clear,
    SilenceWatches,
    Storm429,
    KillApiServer,
    RelaunchApiServer,
}

/// The fault cycle: (second within the cycle, step).
const CYCLE: Duration = Duration::from_secs(180);
const SCHEDULE: [(u64, Fault); 8] = [
    (0, Fault::CutWatches),
    (30, Fault::Clear),
    (35, Fault::SilenceWatches),
    (90, Fault::Storm429),
    (120, Fault::Clear),
    (130, Fault::KillApiServer),
    (136, Fault::RelaunchApiServer),
    (179, Fault::Clear),
];

/// A replica through the proxy, named `name` there, with upstream's lease settings.
fn replica(api: &ApiServer, proxy: &FaultProxy, name: &'static str) -> Scheduler {
    Scheduler::start(
        api,
        name,
        SchedulerOptions {
            leader_elect: true,
            lease: LeaseTimes::Defaults,
            rust_log: Some("info"),
            kubeconfig: Some(proxy.kubeconfig_for(name)),
            hostname: Some(name),
            ..Default::default()
        },
    )
}

async fn leader_index(client: &kube::Client, names: &[&str]) -> Option<usize> {
    let lease = kube::Api::<k8s_openapi::api::coordination::v1::Lease>::namespaced(
        client.clone(),
        "garden",
    )
    .get_opt("gardener-scheduler-leader-election")
    .await
    .ok()??;
    let holder = lease.spec?.holder_identity?;
    names
        .iter()
        .position(|n| holder.starts_with(&format!("{n}_")))
}

fn assert_within_allocatable(per_seed: &BTreeMap<String, (u64, u64, bool)>, when: &str) {
    for (seed, (n, alloc, _)) in per_seed {
        assert!(
            n <= alloc,
            "{when}: seed {seed} holds {n} shoots, allocatable {alloc}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a long soak run; `make soak` runs it"]
async fn soak() {
    let minutes = env_f64("SOAK_MINUTES", 10.0);
    let rate = env_f64("SOAK_RATE", 5.0);
    assert!(minutes > 0.0 && rate > 0.0);
    // a hanging API server fails the run instead of stalling it
    let limit = Duration::from_secs_f64(minutes * 60.0) + Duration::from_secs(600);
    tokio::time::timeout(limit, run(minutes, rate))
        .await
        .unwrap_or_else(|_| panic!("the soak run did not finish within {limit:?}"));
}

async fn run(minutes: f64, rate: f64) {
    let api = ApiServer::start("soak");
    let client = api.client().await;
    base_landscape(&client, PROJECT).await;
    let mut seeds: BTreeMap<String, SeedState> = BTreeMap::new();
    let mut seed_counter = 0;
    for _ in 0..6 {
        let name = format!("seed-{seed_counter:03}");
        seed_counter += 1;
        create_seed(&client, &name, 20, &[]).await;
        seeds.insert(
            name,
            SeedState {
                allocatable: 20,
                tainted: false,
            },
        );
    }
    let proxy = FaultProxy::start(&api).await;
    let names = ["one", "two", "three"];
    let mut replicas: Vec<Option<Scheduler>> = vec![
        Some(replica(&api, &proxy, names[0])),
        Some(replica(&api, &proxy, names[1])),
        None,
    ];
    for r in replicas.iter_mut().flatten() {
        r.wait_ready().await;
    }
    eventually("a leader", || async {
        leader_index(&client, &names).await.map(drop)
    })
    .await;
    let (history, recorder) = record(&client);

    // a live population first, so that memory is compared at equal size
    let mut live: Vec<String> = Vec::new();
    let mut shoot_counter = 0;
    for _ in 0..140 {
        let name = format!("shoot-{shoot_counter:05}");
        shoot_counter += 1;
        create_shoot(&client, PROJECT, &name).await;
        live.push(name);
    }
    eventually("the initial population to settle", || async {
        let (_, pending, free) = census(&client).await?;
        (pending.is_empty() || free == 0).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(10)).await;
    // RSS per replica from its settled start: (seconds into the churn, KiB)
    let mut rss: Vec<Vec<(u64, u64)>> = replicas
        .iter()
        .map(|r| {
            r.as_ref()
                .map(|r| vec![(0, r.rss_kib())])
                .unwrap_or_default()
        })
        .collect();

    let shoots = kube::Api::<Shoot>::namespaced(client.clone(), NAMESPACE);
    let seed_api = kube::Api::<Seed>::all(client.clone());
    let mut rng = Rng(0x5eed_50a4_2026_0001);
    let mut ops: BTreeMap<&str, usize> = BTreeMap::new();
    let mut failed_ops: BTreeMap<&str, usize> = BTreeMap::new();
    let mut faults_done: Vec<(u64, String)> = Vec::new();
    let started = Instant::now();
    let duration = Duration::from_secs_f64(minutes * 60.0);
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut next_sample = Duration::from_secs(30);
    // the fault steps, in time order over the whole run
    let mut steps: Vec<(Duration, Fault)> = (0..)
        .map(|c| CYCLE * c)
        .take_while(|t| *t < duration)
        .flat_map(|t| SCHEDULE.map(|(s, f)| (t + Duration::from_secs(s), f)))
        .filter(|(t, _)| *t < duration)
        .collect();
    steps.reverse();
    let kill_leader_at = duration / 2;
    let mut killed: Option<(usize, Instant)> = None;
    let mut apiserver_args: Option<Vec<String>> = None;
    while started.elapsed() < duration {
        tick.tick().await;
        let now = started.elapsed();
        while steps.last().is_some_and(|(t, _)| *t <= now) {
            let (_, fault) = steps.pop().unwrap();
            match fault {
                Fault::CutWatches => proxy.set(Faults {
                    cut_watches_after: Some(Duration::from_secs(5)),
                    ..Default::default()
                }),
                Fault::Clear => proxy.clear(),
                Fault::SilenceWatches => {
                    proxy.clear();
                    let n = proxy.silence_open_watches(None);
                    faults_done.push((now.as_secs(), format!("silenced {n} watches")));
                }
                Fault::Storm429 => proxy.set(Faults {
                    storm: Some(Storm {
                        status: 429,
                        retry_after: Some(2),
                        retry_after_in_body: true,
                        fraction: 0.5,
                        targets: vec![Target::Binds, Target::Lists, Target::Lease],
                    }),
                    ..Default::default()
                }),
                Fault::KillApiServer => apiserver_args = Some(api.kill_apiserver()),
                Fault::RelaunchApiServer => {
                    if let Some(args) = apiserver_args.take() {
                        api.relaunch_apiserver(&args);
                    }
                }
            }
            faults_done.push((now.as_secs(), format!("{fault:?}")));
        }
        if killed.is_none() && now >= kill_leader_at {
            if let Some(i) = leader_index(&client, &names).await
                && let Some(mut leader) = replicas[i].take()
            {
                leader.kill();
                faults_done.push((now.as_secs(), format!("killed leader {}", names[i])));
                killed = Some((i, Instant::now()));
            }
        } else if let Some((_, at)) = killed
            && replicas[2].is_none()
            && at.elapsed() >= Duration::from_secs(20)
        {
            // the killed one comes back, as a new process: a standby
            replicas[2] = Some(replica(&api, &proxy, names[2]));
            faults_done.push((now.as_secs(), "started three as a standby".into()));
        }

        let r = rng.below(100);
        let op = match r {
            0..40 if live.len() < MAX_LIVE => "create shoot",
            0..70 if live.len() > MIN_LIVE => "delete shoot",
            0..70 => "create shoot",
            70..80 => "relabel shoot",
            80..88 => "toggle seed taint",
            88..94 => "raise seed allocatable",
            94..97 if seeds.len() < MAX_SEEDS => "create seed",
            _ if seeds.len() > MIN_SEEDS => "delete seed",
            _ => "relabel shoot",
        };
        let done = match op {
            "create shoot" => {
                let name = format!("shoot-{shoot_counter:05}");
                shoot_counter += 1;
                let r = try_create_shoot(&client, &name).await;
                if r.is_ok() {
                    live.push(name);
                }
                r.is_ok()
            }
            "delete shoot" => {
                let name = live.swap_remove(rng.below(live.len()));
                shoots.delete(&name, &DeleteParams::default()).await.is_ok()
            }
            "relabel shoot" => {
                let name = &live[rng.below(live.len())];
                let patch = serde_json::json!({"metadata": {"labels": {"soak-generation": rng.next().to_string()}}});
                shoots
                    .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .is_ok()
            }
            "toggle seed taint" => {
                let name = seeds.keys().nth(rng.below(seeds.len())).unwrap().clone();
                let s = seeds.get_mut(&name).unwrap();
                let ok = try_seed_taints(&client, &name, !s.tainted).await.is_ok();
                if ok {
                    s.tainted = !s.tainted;
                }
                ok
            }
            "raise seed allocatable" => {
                let name = seeds.keys().nth(rng.below(seeds.len())).unwrap().clone();
                let s = seeds.get_mut(&name).unwrap();
                let to = s.allocatable + 1 + rng.below(3) as u32;
                let ok = try_set_seed_status(&client, &name, to).await.is_ok();
                if ok {
                    s.allocatable = to;
                }
                ok
            }
            "create seed" => {
                let name = format!("seed-{seed_counter:03}");
                seed_counter += 1;
                let allocatable = 5 + rng.below(11) as u32;
                let ok = try_create_seed(&client, &name, allocatable).await.is_ok();
                if ok {
                    seeds.insert(
                        name,
                        SeedState {
                            allocatable,
                            tainted: false,
                        },
                    );
                }
                ok
            }
            _ => {
                // the seed with the fewest shoots; shoots bound to it stay bound (to a seed that
                // is gone), as when a seed is removed from a landscape by force
                match census(&client).await {
                    Some((per_seed, _, _)) => {
                        let name = per_seed
                            .iter()
                            .min_by_key(|(name, (n, _, _))| (*n, (*name).clone()))
                            .map(|(k, _)| k.clone())
                            .unwrap();
                        let ok = seed_api
                            .delete(&name, &DeleteParams::default())
                            .await
                            .is_ok();
                        if ok {
                            seeds.remove(&name);
                        }
                        ok
                    }
                    None => false,
                }
            }
        };
        *ops.entry(op).or_default() += 1;
        if !done {
            *failed_ops.entry(op).or_default() += 1;
        }
        if started.elapsed() >= next_sample {
            next_sample += Duration::from_secs(30);
            for (i, r) in replicas.iter_mut().enumerate() {
                if let Some(r) = r {
                    assert!(r.is_running(), "{}", r.logs());
                    rss[i].push((started.elapsed().as_secs(), r.rss_kib()));
                }
            }
            if let Some((per_seed, _, _)) = census(&client).await {
                assert_within_allocatable(&per_seed, &format!("at {:?}", started.elapsed()));
            }
        }
    }
    let churn = started.elapsed();
    let total: usize = ops.values().sum();
    proxy.clear();
    if let Some(args) = apiserver_args.take() {
        api.relaunch_apiserver(&args);
    }
    let client = answering_client(&api).await;

    let (per_seed, pending, free) = eventually("the landscape to settle", || async {
        let c = census(&client).await?;
        (c.1.is_empty() || c.2 == 0).then_some(c)
    })
    .await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    for (i, r) in replicas.iter().enumerate() {
        if let Some(r) = r {
            rss[i].push((started.elapsed().as_secs(), r.rss_kib()));
        }
    }

    // every bound shoot: seen by the recorder, bound once, one success event at most
    let bound: Vec<Shoot> = list_shoots(&client, PROJECT)
        .await
        .into_iter()
        .filter(|s| seed_of(s).is_some())
        .collect();
    eventually("the recorder to see every bound shoot", || async {
        let h = history.lock().unwrap();
        bound
            .iter()
            .all(|s| {
                h.get(s.metadata.name.as_deref().unwrap())
                    .is_some_and(|v| !v.is_empty())
            })
            .then_some(())
    })
    .await;
    let h = history.lock().unwrap().clone();
    let rebound: Vec<(&String, &Vec<String>)> = h.iter().filter(|(_, v)| v.len() > 1).collect();
    assert!(
        rebound.is_empty(),
        "shoots bound more than once: {rebound:?}"
    );
    for s in &bound {
        let name = s.metadata.name.as_deref().unwrap();
        assert_eq!(h[name], vec![seed_of(s).unwrap().to_string()], "{name}");
    }
    let mut successes: HashMap<String, i32> = HashMap::new();
    for e in Api::<k8s_openapi::api::events::v1::Event>::namespaced(client.clone(), NAMESPACE)
        .list(&Default::default())
        .await
        .unwrap()
    {
        if e.reason.as_deref() == Some("SchedulingSuccessful") {
            let n = e.series.as_ref().map_or(1, |s| s.count);
            *successes
                .entry(e.regarding.and_then(|r| r.name).unwrap_or_default())
                .or_default() += n;
        }
    }
    let twice: Vec<_> = successes.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "more than one success event: {twice:?}");
    assert_within_allocatable(&per_seed, "at the end");
    assert!(
        pending.is_empty() || free == 0,
        "pending {pending:?} although {free} slots are free"
    );
    for r in replicas.iter_mut().flatten() {
        assert!(r.is_running(), "{}", r.logs());
        let logs = r.logs();
        assert!(!logs.contains("panicked"), "{logs}");
    }

    let counts = proxy.counts();
    let faulted: BTreeMap<&str, usize> =
        proxy
            .requests()
            .iter()
            .filter_map(|s| s.fault)
            .fold(BTreeMap::new(), |mut m, f| {
                *m.entry(f).or_default() += 1;
                m
            });
    eprintln!(
        "soak: {minutes} min at {rate}/s: {total} changes in {churn:?} ({:.2}/s): {ops:?}; failed while faults were on: {failed_ops:?}",
        total as f64 / churn.as_secs_f64()
    );
    eprintln!(
        "soak: {} shoots created, {} live, {} bound, {} pending at the end ({free} free slots on untainted seeds); {} seeds; {} shoots ever bound, none twice",
        shoot_counter,
        live.len(),
        bound.len(),
        pending.len(),
        per_seed.len(),
        h.values().filter(|v| !v.is_empty()).count()
    );
    eprintln!("soak: faults (second, step): {faults_done:?}");
    eprintln!(
        "soak: requests at the proxy: {counts:?}; answered by a fault: {faulted:?}; binds {}",
        counts.get(&Class::Bind).copied().unwrap_or(0)
    );
    for (i, samples) in rss.iter().enumerate() {
        if !samples.is_empty() {
            eprintln!("soak: VmRSS of {} (s, KiB): {samples:?}", names[i]);
        }
    }
    // the replica that ran from start to end: not killed, not started late
    let survivor = (0..2)
        .find(|i| killed.is_none_or(|(k, _)| k != *i))
        .unwrap();
    let (rss_start, rss_end) = (rss[survivor][0].1, rss[survivor].last().unwrap().1);
    eprintln!(
        "soak: VmRSS of {} (ran throughout): start {rss_start} KiB, end {rss_end} KiB",
        names[survivor]
    );
    assert!(
        rss_end <= rss_start + rss_start / 2 + RSS_SLACK_KIB,
        "memory grew: {rss_start} KiB -> {rss_end} KiB"
    );
    recorder.abort();
}

//! A bounded soak run against a real API server: `make soak` (`SOAK_MINUTES`, default 10;
//! `SOAK_RATE` changes per second, default 5). Ignored by `cargo test`.
//!
//! Shoots and seeds are created, changed and deleted at a fixed rate while the scheduler binary
//! runs with leader election. Afterwards: every shoot that had a fitting seed is bound, none was
//! ever bound twice (recorded from a watch of its own) or got two success events, no seed holds
//! more shoots than it allocates, and the scheduler's resident memory did not grow.

#[path = "support/mod.rs"]
mod support;

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::TryStreamExt;
use kube::api::{DeleteParams, Patch, PatchParams};
use kube::runtime::watcher;

use gardener_scheduler::api::{Seed, Shoot};
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
            let _ = watcher::watcher(api, watcher::Config::default())
                .try_for_each(|ev| {
                    let seen = seen.clone();
                    async move {
                        if let watcher::Event::Apply(s) | watcher::Event::InitApply(s) = ev {
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
                        Ok(())
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

/// Shoots per seed, pending shoots, and the free slots of untainted seeds, from the API.
async fn census(client: &kube::Client) -> (BTreeMap<String, (u64, u64, bool)>, Vec<String>, u64) {
    let seeds = kube::Api::<Seed>::all(client.clone())
        .list(&Default::default())
        .await
        .unwrap();
    let shoots = list_shoots(client, PROJECT).await;
    let mut per_seed: BTreeMap<String, (u64, u64, bool)> = seeds
        .iter()
        .map(|s| {
            let alloc = s
                .status
                .allocatable
                .get("shoots")
                .map(|q| q.0.parse().unwrap())
                .unwrap_or(0);
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
    (per_seed, pending, free)
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
    let mut scheduler = Scheduler::start(
        &api,
        "soak",
        SchedulerOptions {
            leader_elect: true,
            rust_log: Some("info"),
            ..Default::default()
        },
    );
    scheduler.wait_ready().await;
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
        let (_, pending, free) = census(&client).await;
        (pending.is_empty() || free == 0).then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(10)).await;
    let rss_start = scheduler.rss_kib();
    let mut rss_samples = vec![(0u64, rss_start)];

    let shoots = kube::Api::<Shoot>::namespaced(client.clone(), NAMESPACE);
    let seed_api = kube::Api::<Seed>::all(client.clone());
    let mut rng = Rng(0x5eed_50a4_2026_0001);
    let mut ops: BTreeMap<&str, usize> = BTreeMap::new();
    let started = Instant::now();
    let duration = Duration::from_secs_f64(minutes * 60.0);
    let mut tick = tokio::time::interval(Duration::from_secs_f64(1.0 / rate));
    tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut next_sample = Duration::from_secs(30);
    while started.elapsed() < duration {
        tick.tick().await;
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
        match op {
            "create shoot" => {
                let name = format!("shoot-{shoot_counter:05}");
                shoot_counter += 1;
                create_shoot(&client, PROJECT, &name).await;
                live.push(name);
            }
            "delete shoot" => {
                let name = live.swap_remove(rng.below(live.len()));
                shoots
                    .delete(&name, &DeleteParams::default())
                    .await
                    .unwrap();
            }
            "relabel shoot" => {
                let name = &live[rng.below(live.len())];
                let patch = serde_json::json!({"metadata": {"labels": {"soak-generation": rng.next().to_string()}}});
                shoots
                    .patch(name, &PatchParams::default(), &Patch::Merge(&patch))
                    .await
                    .unwrap();
            }
            "toggle seed taint" => {
                let name = seeds.keys().nth(rng.below(seeds.len())).unwrap().clone();
                let s = seeds.get_mut(&name).unwrap();
                s.tainted = !s.tainted;
                set_seed_taints(&client, &name, if s.tainted { &[TAINT] } else { &[] }).await;
            }
            "raise seed allocatable" => {
                let name = seeds.keys().nth(rng.below(seeds.len())).unwrap().clone();
                let s = seeds.get_mut(&name).unwrap();
                s.allocatable += 1 + rng.below(3) as u32;
                set_seed_status(&client, &name, s.allocatable).await;
            }
            "create seed" => {
                let name = format!("seed-{seed_counter:03}");
                seed_counter += 1;
                let allocatable = 5 + rng.below(11) as u32;
                create_seed(&client, &name, allocatable, &[]).await;
                seeds.insert(
                    name,
                    SeedState {
                        allocatable,
                        tainted: false,
                    },
                );
            }
            _ => {
                // the seed with the fewest shoots; shoots bound to it stay bound (to a seed that
                // is gone), as when a seed is removed from a landscape by force
                let (per_seed, _, _) = census(&client).await;
                let name = per_seed
                    .iter()
                    .min_by_key(|(name, (n, _, _))| (*n, (*name).clone()))
                    .map(|(k, _)| k.clone())
                    .unwrap();
                seed_api
                    .delete(&name, &DeleteParams::default())
                    .await
                    .unwrap();
                seeds.remove(&name);
            }
        }
        *ops.entry(op).or_default() += 1;
        if started.elapsed() >= next_sample {
            next_sample += Duration::from_secs(30);
            assert!(scheduler.is_running(), "{}", scheduler.logs());
            rss_samples.push((started.elapsed().as_secs(), scheduler.rss_kib()));
            let (per_seed, _, _) = census(&client).await;
            assert_within_allocatable(&per_seed, &format!("at {:?}", started.elapsed()));
        }
    }
    let churn = started.elapsed();
    let total: usize = ops.values().sum();

    let (per_seed, pending, free) = eventually("the landscape to settle", || async {
        let c = census(&client).await;
        (c.1.is_empty() || c.2 == 0).then_some(c)
    })
    .await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let rss_end = scheduler.rss_kib();
    rss_samples.push((started.elapsed().as_secs(), rss_end));

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
    for e in kube::Api::<k8s_openapi::api::events::v1::Event>::namespaced(client.clone(), NAMESPACE)
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
    assert!(scheduler.is_running(), "{}", scheduler.logs());
    let logs = scheduler.logs();
    assert!(!logs.contains("panicked"), "{logs}");

    eprintln!(
        "soak: {minutes} min at {rate}/s: {total} changes in {churn:?} ({:.2}/s): {ops:?}",
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
    eprintln!("soak: VmRSS (s, KiB): {rss_samples:?}");
    eprintln!("soak: VmRSS start {rss_start} KiB, end {rss_end} KiB");
    assert!(
        rss_end <= rss_start + rss_start / 2 + RSS_SLACK_KIB,
        "memory grew: {rss_start} KiB -> {rss_end} KiB"
    );
    recorder.abort();
}

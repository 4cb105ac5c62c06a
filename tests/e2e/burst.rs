use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex};

use futures::{StreamExt, TryStreamExt};
use kube::runtime::watcher;

use crate::support::*;
use gardener_scheduler::api::{Seed, Shoot};

/// Every `spec.seedName` value each shoot has had, in order, as the watch saw it.
pub type Transitions = Arc<Mutex<HashMap<String, Vec<String>>>>;

/// Records, for every shoot in `namespace`, each distinct non-empty `spec.seedName` it takes.
pub fn record_transitions(
    client: &kube::Client,
    namespace: &str,
) -> (Transitions, tokio::task::JoinHandle<()>) {
    let seen: Transitions = Arc::default();
    let api = kube::Api::<Shoot>::namespaced(client.clone(), namespace);
    let task = tokio::spawn({
        let seen = seen.clone();
        async move {
            let stream = watcher::watcher(api, watcher::Config::default());
            let _ = stream
                .try_for_each(|ev| {
                    let seen = seen.clone();
                    async move {
                        if let watcher::Event::Apply(s) | watcher::Event::InitApply(s) = ev
                            && let Some(seed) = seed_of(&s)
                        {
                            let mut m = seen.lock().unwrap();
                            let v = m
                                .entry(s.metadata.name.clone().unwrap_or_default())
                                .or_default();
                            if v.last().map(String::as_str) != Some(seed) {
                                v.push(seed.to_string());
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

/// Checks that every shoot went to exactly one seed, once, and no seed exceeds its allocatable.
/// Creates `n` shoots `shoot-<i>` (`i` of `width` digits) in the project, 16 at a time, waits
/// until all are bound and the recorder `seen` saw every bind, and checks each was bound once,
/// within the seeds' capacity.
pub async fn burst_bound_once(
    client: &kube::Client,
    project: &str,
    n: usize,
    width: usize,
    seen: &Transitions,
) {
    futures::stream::iter(0..n)
        .for_each_concurrent(16, |i| {
            let client = client.clone();
            async move { create_shoot(&client, project, &format!("shoot-{i:0width$}")).await }
        })
        .await;

    wait_bound(client, &format!("all {n} shoots to be bound"), project, n).await;
    // let the watch recorder catch up with the last binds
    eventually("the recorder to see every bind", || async {
        (seen.lock().unwrap().len() == n).then_some(())
    })
    .await;
    assert_bound_once_within_capacity(client, project, seen, n).await;
}

pub async fn assert_bound_once_within_capacity(
    client: &kube::Client,
    project: &str,
    seen: &Transitions,
    expected: usize,
) {
    let shoots = list_shoots(client, project).await;
    assert_eq!(shoots.len(), expected);
    let seeds: BTreeMap<String, u64> = kube::Api::<Seed>::all(client.clone())
        .list(&Default::default())
        .await
        .unwrap()
        .into_iter()
        .map(|s| {
            let n = allocatable_shoots(&s);
            (s.metadata.name.unwrap(), n)
        })
        .collect();
    let mut per_seed: BTreeMap<&str, u64> = BTreeMap::new();
    for s in &shoots {
        *per_seed.entry(seed_of(s).expect("bound")).or_default() += 1;
    }
    for (seed, n) in &per_seed {
        assert!(
            *n <= seeds[*seed],
            "seed {seed} has {n} shoots, allocatable {}",
            seeds[*seed]
        );
    }
    let seen = seen.lock().unwrap();
    for s in &shoots {
        let name = s.metadata.name.as_deref().unwrap();
        let history = seen.get(name).cloned().unwrap_or_default();
        assert_eq!(
            history,
            vec![seed_of(s).unwrap().to_string()],
            "{name} was bound more than once: {history:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_hundred_shoots_fill_exactly_three_hundred_slots_without_overcommit() {
    let (api, client) = ApiServer::start_with_landscape("burst", "burst").await;
    for (name, slots) in [("s-100", 100), ("s-80", 80), ("s-70", 70), ("s-50", 50)] {
        create_seed(&client, name, slots, &[]).await;
    }
    let mut scheduler = Scheduler::start(
        &api,
        "burst",
        SchedulerOptions {
            concurrent_syncs: 10,
            ..Default::default()
        },
    );
    scheduler.wait_ready().await;
    let (seen, watch) = record_transitions(&client, "garden-burst");

    burst_bound_once(&client, "burst", 300, 3, &seen).await;

    // one more does not fit anywhere
    create_shoot(&client, "burst", "one-too-many").await;
    let event = event_with_reason(
        &client,
        "the failure event of the 301st shoot",
        "burst",
        "one-too-many",
        "SchedulingFailed",
    )
    .await;
    assert_eq!(
        event.note.as_deref(),
        Some(
            "Failed to schedule Shoot: 0/4 seeds are available: 4 seed(s) have no capacity left. \
             To schedule it: raise status.allocatable.shoots or add a seed."
        )
    );
    // exactly one success event per shoot
    let events = kube::Api::<k8s_openapi::api::events::v1::Event>::namespaced(
        client.clone(),
        "garden-burst",
    )
    .list(&Default::default())
    .await
    .unwrap();
    let mut successes: HashMap<String, u32> = HashMap::new();
    for e in events
        .items
        .iter()
        .filter(|e| e.reason.as_deref() == Some("SchedulingSuccessful"))
    {
        *successes
            .entry(e.regarding.as_ref().unwrap().name.clone().unwrap())
            .or_default() += 1;
    }
    assert_eq!(successes.len(), 300);
    assert!(
        successes.values().all(|n| *n == 1),
        "a shoot got two success events"
    );
    assert_eq!(
        scheduler.metric(
            "gardener_scheduler_schedule_attempts_total{result=\"scheduled\",profile=\"default\"}"
        ),
        Some(300.0)
    );
    watch.abort();
}

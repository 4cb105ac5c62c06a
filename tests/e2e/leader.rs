use std::collections::HashMap;
use std::time::{Duration, Instant};

use futures::StreamExt;
use k8s_openapi::api::coordination::v1::Lease;

use crate::burst::{assert_bound_once_within_capacity, record_transitions};
use crate::support::*;

async fn holder(client: &kube::Client) -> Option<String> {
    kube::Api::<Lease>::namespaced(client.clone(), "garden")
        .get_opt("gardener-scheduler-leader-election")
        .await
        .ok()
        .flatten()
        .and_then(|l| l.spec)
        .and_then(|s| s.holder_identity)
        .filter(|h| !h.is_empty())
}

/// An API server with two seeds of `capacity` shoots for project `ha`, and two schedulers with
/// leader election, once one of them leads: `(api, client, leader, standby, leader identity)`.
async fn leader_and_standby(
    name: &str,
    capacity: u32,
) -> (ApiServer, kube::Client, Scheduler, Scheduler, String) {
    let (api, client) = ApiServer::start_with_landscape(name, "ha").await;
    create_seed(&client, "s-a", capacity, &[]).await;
    create_seed(&client, "s-b", capacity, &[]).await;
    let (one, two) = Scheduler::start_electing_pair(&api).await;
    let first = eventually("a leader", || async { holder(&client).await }).await;
    let one_leads = eventually("exactly one process reporting itself leader", || async {
        match (
            one.metric("gardener_scheduler_leader"),
            two.metric("gardener_scheduler_leader"),
        ) {
            (Some(1.0), Some(0.0)) => Some(true),
            (Some(0.0), Some(1.0)) => Some(false),
            _ => None,
        }
    })
    .await;
    let (leader, standby) = if one_leads { (one, two) } else { (two, one) };
    (api, client, leader, standby, first)
}

/// Creates `n` shoots named `<prefix>-<i>` in project `ha`, 8 at a time, in the background.
fn burst(client: &kube::Client, prefix: &'static str, n: usize) -> tokio::task::JoinHandle<()> {
    let client = client.clone();
    tokio::spawn(async move {
        futures::stream::iter(0..n)
            .for_each_concurrent(8, |i| {
                let client = client.clone();
                async move { create_shoot(&client, "ha", &format!("{prefix}-{i:03}")).await }
            })
            .await
    })
}

/// Shoots of project `ha` with a seed.
async fn bound(client: &kube::Client) -> usize {
    list_shoots(client, "ha")
        .await
        .iter()
        .filter(|s| seed_of(s).is_some())
        .count()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_leader_binds_and_the_standby_takes_over_when_it_dies() {
    let (_api, client, mut leader, mut standby, first) = leader_and_standby("leader", 120).await;
    let (seen, watch) = record_transitions(&client, "garden-ha");

    // a burst; kill the leader once part of it is bound
    let creator = burst(&client, "shoot", 200);
    eventually("part of the burst to be bound", || async {
        (bound(&client).await >= 30).then_some(())
    })
    .await;
    let before = binds_by_instance_of(&client, "").await;
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        vec![&first],
        "only the leader binds: {before:?}"
    );
    leader.kill();
    let killed = Instant::now();

    let second = eventually("the standby to take the lease", || async {
        holder(&client).await.filter(|h| *h != first)
    })
    .await;
    let takeover = killed.elapsed();
    // lease 4 s; the standby must have seen the record unchanged for that long, plus its polling
    assert!(
        takeover < Duration::from_secs(10),
        "takeover took {takeover:?}"
    );
    eventually("the standby to report itself leader", || async {
        (standby.metric("gardener_scheduler_leader") == Some(1.0)).then_some(())
    })
    .await;
    creator.await.unwrap();

    eventually("all 200 shoots to be bound", || async {
        (bound(&client).await == 200).then_some(())
    })
    .await;
    eventually("the recorder to see every bind", || async {
        (seen.lock().unwrap().len() == 200).then_some(())
    })
    .await;
    assert_bound_once_within_capacity(&client, "ha", &seen, 200).await;
    let after = binds_by_instance_of(&client, "").await;
    assert!(
        after.get(&second).is_some_and(|n| *n > 0),
        "the new leader bound the rest: {after:?}"
    );
    assert!(
        after.keys().all(|k| *k == first || *k == second),
        "{after:?}"
    );
    eprintln!("leader takeover after {takeover:?}; binds by instance: {after:?}");

    // a graceful stop hands the lease back at once
    assert!(standby.terminate().success());
    let lease = kube::Api::<Lease>::namespaced(client.clone(), "garden")
        .get("gardener-scheduler-leader-election")
        .await
        .unwrap();
    assert_eq!(
        lease.spec.and_then(|s| s.holder_identity),
        None,
        "released on SIGTERM"
    );
    watch.abort();
}

/// Success events per reporting instance for the shoots whose name starts with `prefix`.
async fn binds_by_instance_of(client: &kube::Client, prefix: &str) -> HashMap<String, usize> {
    let mut by = HashMap::new();
    for e in
        kube::Api::<k8s_openapi::api::events::v1::Event>::namespaced(client.clone(), "garden-ha")
            .list(&Default::default())
            .await
            .unwrap()
    {
        let about = e
            .regarding
            .as_ref()
            .and_then(|r| r.name.as_deref())
            .unwrap_or_default();
        if e.reason.as_deref() == Some("SchedulingSuccessful") && about.starts_with(prefix) {
            *by.entry(e.reporting_instance.unwrap_or_default())
                .or_default() += 1;
        }
    }
    by
}

/// A leader frozen mid-burst (SIGSTOP: a stalled VM, a stopped container) loses its lease; the
/// standby finishes the burst; once resumed, the old leader finds its renew deadline passed and
/// binds nothing more.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_frozen_mid_burst_binds_nothing_after_it_resumes_and_the_standby_finishes() {
    let (_api, client, mut leader, standby, first) = leader_and_standby("frozen-leader", 60).await;
    let (seen, watch) = record_transitions(&client, "garden-ha");

    let creator = burst(&client, "burst", 80);
    eventually("part of the burst to be bound", || async {
        (bound(&client).await >= 10).then_some(())
    })
    .await;
    leader.pause();
    let second = eventually("the standby to take the lease", || async {
        holder(&client).await.filter(|h| *h != first)
    })
    .await;
    creator.await.unwrap();
    eventually("the standby to bind the rest of the burst", || async {
        let shoots = list_shoots(&client, "ha").await;
        (shoots.len() == 80 && shoots.iter().all(|s| seed_of(s).is_some())).then_some(())
    })
    .await;

    leader.resume();
    eventually("the resumed process to see it lost the lease", || async {
        (leader.metric("gardener_scheduler_leader") == Some(0.0)).then_some(())
    })
    .await;
    for i in 0..20 {
        create_shoot(&client, "ha", &format!("late-{i:02}")).await;
    }
    eventually("the late shoots to be bound", || async {
        let shoots = list_shoots(&client, "ha").await;
        (shoots.len() == 100 && shoots.iter().all(|s| seed_of(s).is_some())).then_some(())
    })
    .await;
    eventually("the recorder to see every bind", || async {
        (seen.lock().unwrap().len() == 100).then_some(())
    })
    .await;
    assert_bound_once_within_capacity(&client, "ha", &seen, 100).await;
    let late = eventually("an event for every late shoot", || async {
        let by = binds_by_instance_of(&client, "late-").await;
        (by.values().sum::<usize>() == 20).then_some(by)
    })
    .await;
    assert_eq!(
        late.keys().collect::<Vec<_>>(),
        vec![&second],
        "only the new leader binds after the old one resumed: {late:?}"
    );
    assert_eq!(holder(&client).await.as_deref(), Some(second.as_str()));
    assert!(
        leader.logs().contains("lost leadership"),
        "{}",
        leader.logs()
    );
    assert_eq!(standby.metric("gardener_scheduler_leader"), Some(1.0));
    eprintln!(
        "binds of the burst by instance: {:?}",
        binds_by_instance_of(&client, "burst-").await
    );
    watch.abort();
}

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

/// Success events per reporting instance.
async fn binds_by_instance(client: &kube::Client) -> HashMap<String, usize> {
    let mut by = HashMap::new();
    for e in
        kube::Api::<k8s_openapi::api::events::v1::Event>::namespaced(client.clone(), "garden-ha")
            .list(&Default::default())
            .await
            .unwrap()
    {
        if e.reason.as_deref() == Some("SchedulingSuccessful") {
            *by.entry(e.reporting_instance.unwrap_or_default())
                .or_default() += 1;
        }
    }
    by
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_the_leader_binds_and_the_standby_takes_over_when_it_dies() {
    let api = ApiServer::start("leader");
    let client = api.client().await;
    base_landscape(&client, "ha").await;
    create_seed(&client, "s-a", 120, &[]).await;
    create_seed(&client, "s-b", 120, &[]).await;
    let opts = || SchedulerOptions {
        leader_elect: true,
        concurrent_syncs: 2,
        ..Default::default()
    };
    let mut one = Scheduler::start(&api, "one", opts());
    let mut two = Scheduler::start(&api, "two", opts());
    one.wait_ready().await;
    two.wait_ready().await;
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
    let (leader, standby) = if one_leads {
        (&mut one, &mut two)
    } else {
        (&mut two, &mut one)
    };
    let (seen, watch) = record_transitions(&client, "garden-ha");

    // a burst; kill the leader once part of it is bound
    let creator = tokio::spawn({
        let client = client.clone();
        async move {
            futures::stream::iter(0..200)
                .for_each_concurrent(8, |i| {
                    let client = client.clone();
                    async move { create_shoot(&client, "ha", &format!("shoot-{i:03}")).await }
                })
                .await
        }
    });
    eventually("part of the burst to be bound", || async {
        let bound = list_shoots(&client, "ha")
            .await
            .iter()
            .filter(|s| seed_of(s).is_some())
            .count();
        (bound >= 30).then_some(())
    })
    .await;
    let before = binds_by_instance(&client).await;
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
        let bound = list_shoots(&client, "ha")
            .await
            .iter()
            .filter(|s| seed_of(s).is_some())
            .count();
        (bound == 200).then_some(())
    })
    .await;
    eventually("the recorder to see every bind", || async {
        (seen.lock().unwrap().len() == 200).then_some(())
    })
    .await;
    assert_bound_once_within_capacity(&client, "ha", &seen, 200).await;
    let after = binds_by_instance(&client).await;
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

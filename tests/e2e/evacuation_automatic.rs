//! Automatic seed evacuation on Gardener's API (`evacuation.mode: automatic`): the leader carries
//! out the plan it publishes, within its limits, as fake gardenlets migrate the control planes
//! through `Migrate` and `Restore`. One move in flight at a time and two per hour hold at every
//! observation, also across a new leader; a gated shoot is never moved and is listed with its
//! reason; the seed's conditions healthy again stop the evacuation at once, the move in flight
//! finishing where it was bound.

use std::collections::BTreeSet;
use std::time::Duration;

use chrono::Utc;
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use crate::evacuation::{NS, PROJECT, gardenlet_ready, published, seed_events, shoot_on};
use crate::plan::migratable_seed;
use crate::support::gardenlet::FakeGardenlets;
use crate::support::*;
use gardener_scheduler::api::Shoot;

/// Judged after 20 s; fail-back only after an hour, so that only the conditions stop the
/// evacuation. One move in flight, two per hour.
const TWO_PER_HOUR: &str = "evacuation: {enabled: true, after: 20s, checkPeriod: 1s, \
     replanPeriod: 1h, mode: automatic, automatic: {maxMovesInFlight: 1, maxMovesPerHour: 2, \
     maxShareInFlight: 100}}\nfailback: {after: 1h}\n";
/// The same with room for every move of the hour.
const TEN_PER_HOUR: &str = "evacuation: {enabled: true, after: 20s, checkPeriod: 1s, \
     replanPeriod: 1h, mode: automatic, automatic: {maxMovesInFlight: 1, maxMovesPerHour: 10, \
     maxShareInFlight: 100}}\nfailback: {after: 1h}\n";

const MOVABLE: [&str; 4] = ["a", "b", "c", "d"];

/// Where each shoot stands: (name, on s2 and finished there, in flight) as Gardener's status
/// says: in flight from the seed change until `Restore Succeeded` on the destination.
async fn standing(client: &kube::Client) -> Vec<(String, bool, bool)> {
    list_shoots(client, PROJECT)
        .await
        .iter()
        .map(|s| {
            let spec = s.spec.seed_name.as_deref();
            let status = s.status.as_ref();
            let at = status.and_then(|st| st.seed_name.as_deref());
            let op = status.and_then(|st| st.last_operation.as_ref());
            let restoring = op.is_some_and(|o| {
                (o.type_ == "Restore" || o.type_ == "Migrate") && o.state != "Succeeded"
            });
            let in_flight = at.is_some() && (spec != at || restoring);
            let arrived = spec == Some("s2") && at == Some("s2") && !in_flight;
            (
                s.metadata.name.clone().unwrap_or_default(),
                arrived,
                in_flight,
            )
        })
        .collect()
}

/// Waits for `what`, checking at every look that at most one migration is in flight.
async fn watching<T, F, Fut>(client: &kube::Client, what: &str, mut f: F) -> T
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Option<T>>,
{
    eventually(what, || {
        let next = f();
        async move {
            let now = standing(client).await;
            let flying: Vec<&String> = now.iter().filter(|s| s.2).map(|s| &s.0).collect();
            assert!(flying.len() <= 1, "two migrations in flight: {flying:?}");
            next.await
        }
    })
    .await
}

fn arrived(now: &[(String, bool, bool)]) -> BTreeSet<String> {
    now.iter().filter(|s| s.1).map(|s| s.0.clone()).collect()
}

fn started(scheduler: &Scheduler) -> f64 {
    scheduler.metric_sum(
        "gardener_scheduler_seed_evacuation_moves_total",
        &[("seed", "s1"), ("result", "started")],
    )
}

/// Waits for `scheduler` to say that the hour's two moves hold the others, then checks that
/// the shoots on the destination are still `two` and that no third move has started.
async fn held_for_the_hour(
    client: &kube::Client,
    scheduler: &Scheduler,
    two: &BTreeSet<String>,
    what: &str,
) {
    eventually(what, || async {
        scheduler
            .logs()
            .contains("2 move(s) started within the last hour (maxMovesPerHour 2)")
            .then_some(())
    })
    .await;
    let now = standing(client).await;
    assert_eq!(&arrived(&now), two, "{now:?}");
    assert!(now.iter().all(|s| !s.2), "a third move started: {now:?}");
}

fn start(api: &ApiServer, name: &str, shoot_config: &'static str) -> Scheduler {
    Scheduler::start(
        api,
        name,
        SchedulerOptions {
            leader_elect: true,
            shoot_config,
            ..Default::default()
        },
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn automatic_evacuation_keeps_its_limits_never_moves_a_gated_shoot_and_stops_on_recovery() {
    let (api, client) = ApiServer::start_with_landscape("evacuation-automatic", PROJECT).await;
    migratable_seed(&client, "s1", 10).await;
    migratable_seed(&client, "s2", 10).await;
    for name in MOVABLE.iter().chain(&["gated"]) {
        shoot_on(&client, name, "s1").await;
    }
    raw_ns::<Shoot>(&client, NS)
        .patch(
            "gated",
            &PatchParams::default(),
            &Patch::Merge(json!({"metadata": {"annotations": {
                "scheduling.gardener.cloud/gates": "example.com/change-freeze"}}})),
        )
        .await
        .unwrap();
    // each migration takes 4 s: long enough to be seen in flight
    let gardenlets = FakeGardenlets::start(client.clone(), NS, Duration::from_secs(4), &[]);
    eventually("the shoots' first reconciles", || async {
        let all = list_shoots(&client, PROJECT).await;
        all.iter()
            .all(|s| s.status.as_ref().is_some_and(|st| st.seed_name.is_some()))
            .then_some(())
    })
    .await;
    let mut scheduler = start(&api, "evacuation-automatic", TWO_PER_HOUR);
    scheduler.wait_ready().await;

    // s1's gardenlet has been gone for an hour: judged unhealthy, its plan carried out.
    gardenlet_ready(
        &client,
        "s1",
        "Unknown",
        Some(Utc::now() - chrono::Duration::hours(1)),
    )
    .await;
    let cm = eventually("s1's evacuation plan published", || async {
        published(&client, "s1").await
    })
    .await;
    let data = cm.data.unwrap_or_default();
    let plan: Value = serde_json::from_str(&data["plan.json"]).unwrap();
    let blocked = plan["blocked"].as_array().unwrap();
    assert_eq!(blocked.len(), 1, "{plan:#}");
    assert_eq!(blocked[0]["shoot"], format!("{NS}/gated"));
    assert_eq!(blocked[0]["category"], "gated");
    assert!(
        blocked[0]["reason"]
            .as_str()
            .unwrap()
            .contains("example.com/change-freeze"),
        "{plan:#}"
    );
    let summary = &data["summary"];
    assert!(
        summary.contains("carried out by the scheduler process (evacuation.mode: automatic): at most 1 move(s) in flight, 2 per hour")
            && summary.contains("gated"),
        "{summary}"
    );

    // Two moves, one after the other; then the hour's limit holds the other two.
    let two = watching(&client, "two shoots on s2", || async {
        let now = arrived(&standing(&client).await);
        (now.len() >= 2).then_some(now)
    })
    .await;
    held_for_the_hour(
        &client,
        &scheduler,
        &two,
        "the hourly limit said to hold the moves",
    )
    .await;
    assert_eq!(gardenlets.max_in_flight(), 1);
    assert_eq!(started(&scheduler), 2.0);
    for shoot in &two {
        let events = shoot_events(&client, PROJECT, shoot).await;
        let note = events
            .iter()
            .find(|e| e.reason.as_deref() == Some("EvacuationMoveStarted"))
            .and_then(|e| e.note.clone())
            .unwrap_or_else(|| panic!("no EvacuationMoveStarted on {shoot}: {events:?}"));
        assert!(
            note.contains("bound to s2 (from s1) by the automatic evacuation of seed s1"),
            "{note}"
        );
    }
    scheduler.assert_nothing_refused("the chart's roles grant every request:");
    scheduler.terminate();

    // A new leader counts the hour's moves from the shoots: still none starts.
    let mut scheduler = start(&api, "evacuation-automatic-2", TWO_PER_HOUR);
    scheduler.wait_ready().await;
    held_for_the_hour(
        &client,
        &scheduler,
        &two,
        "the new leader holds the moves for the hour",
    )
    .await;
    assert_eq!(started(&scheduler), 0.0);
    scheduler.terminate();

    // Room for more: the third move starts; s1 recovers while it is in flight.
    let mut scheduler = start(&api, "evacuation-automatic-3", TEN_PER_HOUR);
    scheduler.wait_ready().await;
    let third = watching(&client, "a third move in flight", || async {
        standing(&client)
            .await
            .into_iter()
            .find(|s| s.2)
            .map(|s| s.0)
    })
    .await;
    gardenlet_ready(&client, "s1", "True", None).await;
    let events = eventually("the evacuation stopped on s1", || async {
        let events = seed_events(&client, "s1").await;
        events
            .iter()
            .any(|(reason, _)| reason == "EvacuationStopped")
            .then_some(events)
    })
    .await;
    let stopped = &events
        .iter()
        .find(|(r, _)| r == "EvacuationStopped")
        .unwrap()
        .1;
    assert!(
        stopped.contains("no further move starts; moves already started are not reverted"),
        "{stopped}"
    );
    // the move in flight finishes on s2; a few checks later, nothing more has moved
    watching(&client, "the third move finished on s2", || async {
        arrived(&standing(&client).await)
            .contains(&third)
            .then_some(())
    })
    .await;
    tokio::time::sleep(Duration::from_secs(5)).await;
    let now = standing(&client).await;
    let mut expected = two.clone();
    expected.insert(third.clone());
    assert_eq!(arrived(&now), expected, "{now:?}");
    assert!(
        now.iter().all(|s| !s.2),
        "a move started after the recovery: {now:?}"
    );
    let moved: BTreeSet<String> = gardenlets.moves().keys().cloned().collect();
    assert_eq!(moved, expected, "{:?}", gardenlets.moves());
    assert!(!moved.contains("gated"));
    assert_eq!(gardenlets.max_in_flight(), 1);
    // the seed is judged unhealthy until failback.after: the plan stays published, unapplied
    assert!(published(&client, "s1").await.is_some());
    assert!(
        scheduler
            .logs()
            .contains("the automatic evacuation stops, no further move starts"),
        "{}",
        scheduler.logs()
    );
    scheduler.assert_nothing_refused("the chart's roles grant every request:");
    scheduler.terminate();
}

//! Seed evacuation on Gardener's API: the scheduler runs with `schedulers.shoot.evacuation`
//! on and the chart's RBAC for that configuration; seeds' conditions are written through their
//! status subresource, as the gardenlet writes them. A seed failing past `evacuation.after` gets
//! its plan published (ConfigMap, event, metric); `plan apply --from-configmap` carries it out;
//! the seed's recovery withdraws it and publishes the fail-back plan of the shoots that left; a
//! seed that flaps within the span publishes nothing.

use std::time::Duration;

use chrono::{DateTime, SecondsFormat, Utc};
use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::api::events::v1::Event;
use kube::api::{Api, Patch, PatchParams};
use serde_json::{Value, json};

use crate::plan::{migratable_seed, moves};
use crate::support::gardenlet::FakeGardenlets;
use crate::support::*;
use crate::whatif::run_cli;
use gardener_scheduler::api::{Seed, Shoot};

pub(crate) const PROJECT: &str = "ev";
pub(crate) const NS: &str = "garden-ev";

/// Judged after 20 s of failing (or well), read every second; a plan once per hour.
const CONFIG: &str = "evacuation: {enabled: true, after: 20s, checkPeriod: 1s, replanPeriod: 1h}\n\
                      failback: {after: 20s}\n";

fn rfc3339(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Secs, true)
}

/// Writes `seed`'s conditions: `GardenletReady` as given (since `since`, when given), the
/// backup bucket ready.
pub(crate) async fn gardenlet_ready(
    client: &kube::Client,
    seed: &str,
    status: &str,
    since: Option<DateTime<Utc>>,
) {
    let mut ready = json!({"type": "GardenletReady", "status": status, "reason": "Test",
                           "message": format!("set to {status} by the test")});
    if let Some(t) = since {
        ready["lastTransitionTime"] = rfc3339(t).into();
    }
    let status = json!({"status": {"conditions": [ready,
        {"type": "BackupBucketsReady", "status": "True", "reason": "BackupBucketsReady"}]}});
    raw::<Seed>(client)
        .patch_status(seed, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
}

/// A shoot on `seed` whose maintenance window holds the present hour.
pub(crate) async fn shoot_on(client: &kube::Client, name: &str, seed: &str) {
    let now = Utc::now();
    let hhmm = |t: DateTime<Utc>| t.format("%H%M00+0000").to_string();
    let mut m = shoot_manifest(PROJECT, name);
    m["spec"]["seedName"] = seed.into();
    m["spec"]["maintenance"] = json!({"timeWindow": {
        "begin": hhmm(now - chrono::Duration::minutes(10)),
        "end": hhmm(now + chrono::Duration::minutes(80))}});
    create(&raw_ns::<Shoot>(client, NS), m).await;
}

/// The events on `seed`, as (reason, note).
pub(crate) async fn seed_events(client: &kube::Client, seed: &str) -> Vec<(String, String)> {
    let events: Api<Event> = Api::namespaced(client.clone(), "default");
    events
        .list(&Default::default())
        .await
        .unwrap()
        .items
        .into_iter()
        .filter(|e| {
            e.regarding.as_ref().and_then(|r| r.name.as_deref()) == Some(seed)
                && e.regarding.as_ref().and_then(|r| r.kind.as_deref()) == Some("Seed")
        })
        .map(|e| (e.reason.unwrap_or_default(), e.note.unwrap_or_default()))
        .collect()
}

pub(crate) async fn published(client: &kube::Client, seed: &str) -> Option<ConfigMap> {
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), "garden");
    api.get_opt(&format!("gardener-scheduler-evacuation-{seed}"))
        .await
        .unwrap()
}

fn ready_metric(scheduler: &Scheduler, seed: &str) -> Option<f64> {
    scheduler.metric(&format!(
        "gardener_scheduler_seed_evacuation_ready{{seed=\"{seed}\"}}"
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unhealthy_seed_gets_a_plan_that_plan_apply_carries_out_and_a_flapping_one_gets_none() {
    let (api, client) = ApiServer::start_with_landscape("evacuation", PROJECT).await;
    migratable_seed(&client, "s1", 10).await;
    migratable_seed(&client, "s2", 10).await;
    // no room: never a destination, so the plan of s1 is the same whatever it says
    migratable_seed(&client, "flapping", 0).await;
    for name in ["a", "b"] {
        shoot_on(&client, name, "s1").await;
    }
    let _gardenlets = FakeGardenlets::start(client.clone(), NS, Duration::from_millis(400), &[]);
    eventually("the shoots' first reconciles", || async {
        let all = list_shoots(&client, PROJECT).await;
        all.iter()
            .all(|s| s.status.as_ref().is_some_and(|st| st.seed_name.is_some()))
            .then_some(())
    })
    .await;
    let mut scheduler = Scheduler::start(
        &api,
        "evacuation",
        SchedulerOptions {
            leader_elect: true,
            shoot_config: CONFIG,
            ..Default::default()
        },
    );
    scheduler.wait_ready().await;
    eventually("every seed judged (its metric at 0)", || async {
        ["s1", "s2", "flapping"]
            .iter()
            .all(|s| ready_metric(&scheduler, s) == Some(0.0))
            .then_some(())
    })
    .await;

    // A seed failing for a few seconds at a time, each stint seen by several checks, well in
    // between: never failing for `after`.
    for _ in 0..3 {
        gardenlet_ready(&client, "flapping", "False", None).await;
        tokio::time::sleep(Duration::from_millis(2500)).await;
        gardenlet_ready(&client, "flapping", "True", None).await;
        tokio::time::sleep(Duration::from_millis(1500)).await;
    }

    // s1's gardenlet has been gone for an hour: judged unhealthy at the next check.
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
    let data = cm.data.clone().unwrap_or_default();
    let plan: Value = serde_json::from_str(&data["plan.json"]).unwrap();
    let mut planned = moves(&plan);
    planned.sort();
    assert_eq!(
        planned,
        [
            (format!("{NS}/a"), "s1".to_string(), "s2".to_string()),
            (format!("{NS}/b"), "s1".to_string(), "s2".to_string())
        ],
        "{plan:#}"
    );
    let summary = &data["summary"];
    assert!(
        summary.contains("Seed s1 is judged unhealthy since")
            && summary.contains("GardenletReady is Unknown (Test): set to Unknown by the test")
            && summary.contains("2 move(s) (2 scheduled, 0 deferred), 0 shoot(s) cannot move"),
        "{summary}"
    );
    // the report an operator opens in a browser, from the same plan
    let html = &data["plan.html"];
    assert!(
        html.starts_with("<!DOCTYPE html>") && html.contains(&format!("{NS}/a")),
        "{}",
        &html[..html.len().min(200)]
    );
    let events = eventually("the event on s1", || async {
        let events = seed_events(&client, "s1").await;
        (!events.is_empty()).then_some(events)
    })
    .await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert_eq!(events[0].0, "EvacuationPlanPublished");
    assert!(
        events[0]
            .1
            .contains("evacuation plan in ConfigMap garden/gardener-scheduler-evacuation-s1"),
        "{events:?}"
    );
    eventually("the metric of s1 at 1", || async {
        (ready_metric(&scheduler, "s1") == Some(1.0)).then_some(())
    })
    .await;

    // The flapping seed, checked after s1's plan: nothing published, no event, its metric 0.
    assert!(published(&client, "flapping").await.is_none());
    assert_eq!(seed_events(&client, "flapping").await, []);
    assert_eq!(ready_metric(&scheduler, "flapping"), Some(0.0));

    // Approval: the published plan, applied by its name with the plan applier's roles.
    let out = run_cli(
        [
            "plan",
            "apply",
            "--from-configmap",
            "garden/gardener-scheduler-evacuation-s1",
            "--kubeconfig",
            &api.plan_applier_identity().display().to_string(),
            "--poll-interval",
            "200ms",
            "-o",
            "json",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    )
    .await;
    assert!(
        out.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&out.stderr),
        String::from_utf8_lossy(&out.stdout)
    );
    for name in ["a", "b"] {
        let shoot = get_shoot(&client, PROJECT, name).await;
        assert_eq!(seed_of(&shoot), Some("s2"), "{name}");
    }

    // s1 well again for an hour: judged healthy at the next check, its plan withdrawn.
    gardenlet_ready(
        &client,
        "s1",
        "True",
        Some(Utc::now() - chrono::Duration::hours(1)),
    )
    .await;
    eventually("s1's plan withdrawn", || async {
        published(&client, "s1").await.is_none().then_some(())
    })
    .await;
    let events = eventually("the recovery event on s1", || async {
        let events = seed_events(&client, "s1").await;
        events
            .iter()
            .any(|(reason, _)| reason == "SeedRecovered")
            .then_some(events)
    })
    .await;
    assert_eq!(events.len(), 2, "{events:?}");
    eventually("the metric of s1 back at 0", || async {
        (ready_metric(&scheduler, "s1") == Some(0.0)).then_some(())
    })
    .await;
    // the shoots that left s1, planned back to it
    let failback: Api<ConfigMap> = Api::namespaced(client.clone(), "garden");
    let cm = failback
        .get("gardener-scheduler-failback-s1")
        .await
        .expect("the fail-back plan is published with the recovery");
    let data = cm.data.unwrap_or_default();
    let plan: Value = serde_json::from_str(&data["plan.json"]).unwrap();
    let mut back = moves(&plan);
    back.sort();
    assert_eq!(
        back,
        [
            (format!("{NS}/a"), "s2".to_string(), "s1".to_string()),
            (format!("{NS}/b"), "s2".to_string(), "s1".to_string())
        ],
        "{plan:#}"
    );
    assert_eq!(plan["goal"], json!({"kind": "failback", "seed": "s1"}));
    let recovered = &events.iter().find(|(r, _)| r == "SeedRecovered").unwrap().1;
    assert!(
        recovered.contains(
            "fail-back plan in ConfigMap garden/gardener-scheduler-failback-s1: 2 move(s)"
        ),
        "{recovered}"
    );
    assert_eq!(
        scheduler.metric("gardener_scheduler_seed_failback_ready{seed=\"s1\"}"),
        Some(1.0)
    );
    // an apply of the withdrawn plan says why there is nothing to apply
    let out = run_cli(
        [
            "plan",
            "apply",
            "--from-configmap",
            "garden/gardener-scheduler-evacuation-s1",
            "--kubeconfig",
            &api.plan_applier_identity().display().to_string(),
        ]
        .iter()
        .map(|s| s.to_string())
        .collect(),
    )
    .await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("configmap garden/gardener-scheduler-evacuation-s1: not found"),
        "{stderr}"
    );
    scheduler.assert_nothing_refused("the chart's roles grant every request:");
    scheduler.terminate();
}

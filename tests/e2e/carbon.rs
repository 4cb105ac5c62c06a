//! Carbon-aware placement in the running scheduler: forecasts come from the exporter's
//! ConfigMaps (labelled, in any namespace) through the watch, and the exporter's
//! delete-and-recreate refresh changes where the next shoot goes.

use chrono::{DateTime, DurationRound, TimeDelta, Utc};
use k8s_openapi::ByteString;
use k8s_openapi::api::core::v1::ConfigMap;
use kube::Api;
use kube::api::{DeleteParams, PostParams};
use serde_json::json;

use crate::support::*;

const LOCATION_LABEL: &str = "carbon.gardener.cloud/location";

/// Carbon weighs ten times ShootCount, so that it decides even against the usage preference.
fn config(api: &ApiServer) -> std::path::PathBuf {
    let path = api.state.join("scheduler-carbon.yaml");
    std::fs::write(
        &path,
        r#"apiVersion: scheduler.config.gardener.cloud/v1alpha1
kind: SchedulerConfiguration
logLevel: debug
logFormat: text
leaderElection:
  leaderElect: false
schedulers:
  shoot:
    concurrentSyncs: 2
    retrySyncPeriod: 1s
    bindingMode: Binding
    candidateDeterminationStrategy: Scored
    backoff: {initial: 1s, max: 4s}
    priorities:
    - name: ShootCount
      weight: 1
    - name: CarbonIntensity
      weight: 10
"#,
    )
    .unwrap();
    path
}

/// The exporter's ConfigMap: hourly points of `value` gCO2eq/kWh for `location` from `start`,
/// the heartbeat `now` in Go's time format, immutable, as the exporter writes it.
fn forecast(
    namespace: &str,
    name: &str,
    location: &str,
    start: DateTime<Utc>,
    hours: i64,
    value: f64,
    now: DateTime<Utc>,
) -> (ConfigMap, Vec<u8>) {
    let points: Vec<serde_json::Value> = (0..hours)
        .map(|i| {
            json!({"location": location,
                   "timestamp": (start + TimeDelta::hours(i)).to_rfc3339(),
                   "duration": 60, "value": value})
        })
        .collect();
    let payload = serde_json::to_vec(&points).unwrap();
    let cm: ConfigMap = serde_json::from_value(json!({
        "apiVersion": "v1", "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace,
                     "labels": {"scheduling.gardener.cloud/purpose": "carbon-intensity"}},
        "immutable": true,
        "data": {
            "lastHeartbeatTime": now.format("%Y-%m-%d %H:%M:%S%.9f +0000 UTC m=+12.345678901").to_string(),
            "message": "",
            "numOfRecords": hours.to_string(),
            "forecastDateTime": start.format("%Y-%m-%d %H:%M:%S +0000 UTC").to_string(),
        },
    }))
    .unwrap();
    let cm = ConfigMap {
        binary_data: Some([("data".to_string(), ByteString(payload.clone()))].into()),
        ..cm
    };
    (cm, payload)
}

/// Creates the ConfigMap and checks that `binaryData` comes back byte for byte, typed and raw.
async fn create_forecast(client: &kube::Client, (cm, payload): (ConfigMap, Vec<u8>)) {
    let ns = cm.metadata.namespace.clone().unwrap();
    let name = cm.metadata.name.clone().unwrap();
    let api: Api<ConfigMap> = Api::namespaced(client.clone(), &ns);
    api.create(&PostParams::default(), &cm).await.unwrap();
    let back = api.get(&name).await.unwrap();
    assert_eq!(
        back.binary_data
            .as_ref()
            .and_then(|b| b.get("data"))
            .map(|b| &b.0),
        Some(&payload),
        "binaryData.data round-trips through the API server"
    );
    let raw = raw_ns::<ConfigMap>(client, &ns).get(&name).await.unwrap();
    assert!(
        raw.data["binaryData"]["data"].is_string(),
        "binaryData is served base64-encoded: {}",
        raw.data["binaryData"]
    );
}

async fn delete_forecast(client: &kube::Client, ns: &str, name: &str) {
    Api::<ConfigMap>::namespaced(client.clone(), ns)
        .delete(name, &DeleteParams::default())
        .await
        .unwrap();
}

async fn bound_to(client: &kube::Client, shoot: &str) -> String {
    eventually(&format!("{shoot} to be bound"), || async {
        seed_of(&get_shoot(client, "dev", shoot).await).map(str::to_string)
    })
    .await
}

async fn success_note(client: &kube::Client, shoot: &str) -> String {
    eventually(
        &format!("the SchedulingSuccessful event of {shoot}"),
        || async {
            shoot_events(client, "dev", shoot)
                .await
                .into_iter()
                .find(|e| e.reason.as_deref() == Some("SchedulingSuccessful"))
                .and_then(|e| e.note)
        },
    )
    .await
}

fn near(v: Option<f64>, want: f64) -> bool {
    v.is_some_and(|v| (v - want).abs() < 0.01)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shoots_go_to_the_cleaner_grid_and_follow_the_exporters_recreated_forecast() {
    let (api, client) = ApiServer::start_with_landscape("carbon", "dev").await;
    for ns in ["kube-system", "carbon-exporter"] {
        ensure_namespace(&client, ns).await;
    }
    // Equal in everything but their location's forecast; seed-c is tainted, no candidate, and
    // its location's forecast ended hours ago.
    for (seed, location, taints) in [
        ("seed-a", "zone-a", &[][..]),
        ("seed-b", "zone-b", &[][..]),
        ("seed-c", "zone-c", &["seed.gardener.cloud/protected"][..]),
    ] {
        create_seed(&client, seed, 20, taints).await;
        label_seed(&client, seed, &[(LOCATION_LABEL, location)]).await;
    }
    // ShootCount prefers seed-b: carbon has to outweigh it.
    create_bound_shoot(&client, "dev", "running-a", "seed-a").await;

    let now = Utc::now();
    let hour = now.duration_trunc(TimeDelta::hours(1)).unwrap();
    let start = hour - TimeDelta::hours(1);
    create_forecast(
        &client,
        forecast("kube-system", "carbon-a", "zone-a", start, 27, 50.0, now),
    )
    .await;
    create_forecast(
        &client,
        forecast(
            "carbon-exporter",
            "carbon-b",
            "zone-b",
            start,
            27,
            600.0,
            now,
        ),
    )
    .await;
    create_forecast(
        &client,
        forecast(
            "kube-system",
            "carbon-c",
            "zone-c",
            hour - TimeDelta::hours(10),
            2,
            100.0,
            now,
        ),
    )
    .await;

    let mut scheduler = Scheduler::start_with_config(&api, "carbon", &config(&api));
    scheduler.wait_ready().await;

    // 1. the cleaner grid wins against the emptier seed
    create_shoot(&client, "dev", "first").await;
    assert_eq!(bound_to(&client, "first").await, "seed-a");
    let note = success_note(&client, "first").await;
    assert!(
        note.contains("CarbonIntensity") && note.contains("50 gCO2eq/kWh (mean over 24h"),
        "the event explains the carbon score: {note}"
    );
    let metrics = eventually("carbon metrics", || async {
        let m = scheduler.metrics();
        m.contains("gardener_scheduler_carbon_data_stale{location=\"zone-c\"} 1")
            .then_some(m)
    })
    .await;
    for line in [
        "gardener_scheduler_carbon_data_stale{location=\"zone-a\"} 0",
        "gardener_scheduler_carbon_data_stale{location=\"zone-b\"} 0",
    ] {
        assert!(
            metrics.lines().any(|l| l == line),
            "missing {line:?}:\n{metrics}"
        );
    }
    assert!(near(
        scheduler.metric("gardener_scheduler_seed_carbon_intensity{seed=\"seed-a\"}"),
        50.0
    ));
    assert!(near(
        scheduler.metric("gardener_scheduler_seed_carbon_intensity{seed=\"seed-b\"}"),
        600.0
    ));
    assert!(
        !metrics.contains("gardener_scheduler_seed_carbon_intensity{seed=\"seed-c\"}"),
        "a seed on stale data scores neutral and has no intensity:\n{metrics}"
    );

    // 2. the exporter deletes its ConfigMaps to refresh them: meanwhile the old data counts
    delete_forecast(&client, "kube-system", "carbon-a").await;
    delete_forecast(&client, "carbon-exporter", "carbon-b").await;
    eventually("the scheduler to see both deletions", || async {
        let logs = scheduler.logs();
        (logs.contains("carbon-intensity ConfigMap deleted")
            && logs.contains("kube-system/carbon-a")
            && logs.contains("carbon-exporter/carbon-b"))
        .then_some(())
    })
    .await;
    create_shoot(&client, "dev", "during-refresh").await;
    assert_eq!(
        bound_to(&client, "during-refresh").await,
        "seed-a",
        "deleted forecasts count during the grace period"
    );
    let note = success_note(&client, "during-refresh").await;
    assert!(note.contains("ConfigMap deleted"), "{note}");
    assert_eq!(
        scheduler.metric("gardener_scheduler_carbon_data_stale{location=\"zone-a\"}"),
        Some(0.0)
    );

    // 3. recreated with the values reversed; seed-b now has more shoots than seed-a
    for i in 0..4 {
        create_bound_shoot(&client, "dev", &format!("running-b{i}"), "seed-b").await;
    }
    let now = Utc::now();
    create_forecast(
        &client,
        forecast("kube-system", "carbon-a", "zone-a", start, 27, 600.0, now),
    )
    .await;
    create_forecast(
        &client,
        forecast(
            "carbon-exporter",
            "carbon-b",
            "zone-b",
            start,
            27,
            50.0,
            now,
        ),
    )
    .await;
    eventually("the reversed forecasts in the metrics", || async {
        (near(
            scheduler.metric("gardener_scheduler_seed_carbon_intensity{seed=\"seed-a\"}"),
            600.0,
        ) && near(
            scheduler.metric("gardener_scheduler_seed_carbon_intensity{seed=\"seed-b\"}"),
            50.0,
        ))
        .then_some(())
    })
    .await;
    create_shoot(&client, "dev", "after-refresh").await;
    assert_eq!(bound_to(&client, "after-refresh").await, "seed-b");
    let note = success_note(&client, "after-refresh").await;
    assert!(
        note.contains("50 gCO2eq/kWh (mean over 24h") && !note.contains("ConfigMap deleted"),
        "the recreated ConfigMap replaced the deleted one: {note}"
    );
    assert_eq!(
        get_shoot(&client, "dev", "first")
            .await
            .spec
            .seed_name
            .as_deref(),
        Some("seed-a")
    );

    // the stale location was reported once, not on every refresh since
    let logs = scheduler.logs();
    let warnings = logs
        .lines()
        .filter(|l| l.contains("carbon-intensity data not usable") && l.contains("zone-c"))
        .count();
    assert_eq!(warnings, 1, "{logs}");
    assert!(scheduler.terminate().success());
}

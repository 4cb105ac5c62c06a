//! A bind is sent from the cached shoot: every field the API server holds, known to the
//! scheduler or not, is still there after the bind, which persists the whole object.

use kube::api::PostParams;

use crate::support::*;
use gardener_scheduler::api::Shoot;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fields_the_scheduler_does_not_know_survive_a_bind() {
    let (api, client) = ApiServer::start_with_landscape("unknown-fields", "dev").await;
    create_seed(&client, "seed-1", 5, &[]).await;
    let mut manifest = shoot_manifest("dev", "rich");
    manifest["metadata"]["labels"] = serde_json::json!({"team": "blue"});
    manifest["metadata"]["annotations"] = serde_json::json!({"example.com/owner": "ops"});
    manifest["spec"]["futureField"] = serde_json::json!({"nested": {"kept": [1, 2, 3]}});
    manifest["spec"]["extensions"] =
        serde_json::json!([{"type": "shoot-dns-service", "providerConfig": {"zones": ["a"]}}]);
    manifest["spec"]["maintenance"] =
        serde_json::json!({"timeWindow": {"begin": "220000+0000", "end": "230000+0000"}});
    let shoots = raw_ns::<Shoot>(&client, "garden-dev");
    shoots
        .create(
            &PostParams::default(),
            &serde_json::from_value(manifest).unwrap(),
        )
        .await
        .unwrap();
    let before = shoots.get("rich").await.unwrap();

    let mut scheduler = Scheduler::start(&api, "unknown-fields", SchedulerOptions::default());
    scheduler.wait_ready().await;
    seed_when_bound(&client, "the shoot to be bound", "dev", "rich").await;
    let after = shoots.get("rich").await.unwrap();
    assert_eq!(after.data["spec"]["seedName"], "seed-1");
    let mut expected_spec = before.data["spec"].clone();
    expected_spec["seedName"] = serde_json::json!("seed-1");
    // gardener-apiserver's admission completes a shoot when it is bound: the pod and service
    // networks from the seed's `networks.shootDefaults`, and an empty `dns`
    expected_spec["networking"]["pods"] = serde_json::json!("100.96.0.0/11");
    expected_spec["networking"]["services"] = serde_json::json!("100.64.0.0/13");
    expected_spec["dns"] = serde_json::json!({});
    assert_eq!(
        after.data["spec"], expected_spec,
        "the bind changed spec.seedName only (and the API server what it adds at binding)"
    );
    // every label kept; gardener-apiserver adds the seed's at binding
    let mut labels = after.metadata.labels.clone().unwrap_or_default();
    assert_eq!(
        labels.remove("name.seed.gardener.cloud/seed-1").as_deref(),
        Some("true")
    );
    assert_eq!(Some(labels), before.metadata.labels);
    // every annotation kept; the one added is the decision record (on by default)
    let mut annotations = after.metadata.annotations.clone().unwrap_or_default();
    assert!(
        annotations
            .remove("scheduling.gardener.cloud/decision")
            .is_some(),
        "the decision record: {annotations:?}"
    );
    assert_eq!(Some(annotations), before.metadata.annotations);
    // the event went out through the reporter's client
    event_with_reason(
        &client,
        "the success event",
        "dev",
        "rich",
        "SchedulingSuccessful",
    )
    .await;
    assert!(
        scheduler.terminate().success(),
        "SIGTERM ends the process cleanly"
    );
}

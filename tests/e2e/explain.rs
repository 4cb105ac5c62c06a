//! `explain NAMESPACE/NAME --kubeconfig`: a bound shoot's record beside the decision now (the
//! same seed, then a seed tainted since), a pending shoot's reasons and nearest seed, a gated
//! shoot; every request a read. And the record as the Patch binding mode carries it.

use serde_json::{Value, json};

use crate::record::recorded_web_shoot;
use crate::support::*;
use crate::whatif::{RecordingProxy, json_out, run_cli};

async fn explain(kubeconfig: &std::path::Path, shoot: &str, output: &str) -> std::process::Output {
    run_cli(vec![
        "explain".into(),
        shoot.into(),
        "--kubeconfig".into(),
        kubeconfig.display().to_string(),
        "-o".into(),
        output.into(),
    ])
    .await
}

fn record_of(shoot: &gardener_scheduler::api::Shoot) -> Option<Value> {
    let text = shoot
        .metadata
        .annotations
        .as_ref()?
        .get("scheduling.gardener.cloud/decision")?;
    Some(serde_json::from_str(text).unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn explain_shows_the_record_the_decision_now_what_changed_and_the_nearest_seed() {
    let api = ApiServer::start("explain");
    let client = api.client().await;
    let (mut scheduler, shoot) = recorded_web_shoot(&api, &client, "explain").await;
    let record = record_of(&shoot).expect("the decision record");
    assert_eq!(record["rejected"], json!({"Taints": 1}), "{record}");
    scheduler.terminate();

    let proxy = RecordingProxy::start(&api, "explain", None).await;
    // Bound, and nothing changed: the same seed, the record shown as stored.
    let v = json_out(&explain(&proxy.kubeconfig, "garden-dev/web", "json").await);
    assert_eq!(v["verdict"], "same", "{v:#}");
    assert_eq!(v["seed"], "s1");
    assert_eq!(v["record"], record);
    assert_eq!(v["now"]["seed"], "s1");
    assert_eq!(
        v["now"]["rejected"],
        json!([{"stage": "Taints", "seeds": 1}])
    );

    // s1 tainted, s2 open: it would go to s2 now, and the text says why.
    set_seed_taints(&client, "s1", &["dedicated"]).await;
    set_seed_taints(&client, "s2", &[]).await;
    let out = explain(&proxy.kubeconfig, "garden-dev/web", "text").await;
    let text = String::from_utf8_lossy(&out.stdout);
    assert_success(&out);
    assert!(text.contains("Verdict: wouldMove"), "{text}");
    assert!(text.contains("It would go to s2 now, not to s1."), "{text}");
    assert!(text.contains("s1 is now rejected by Taints"), "{text}");
    assert!(
        text.contains("seed s1  profile default"),
        "the record: {text}"
    );

    // Pending, and no seed fits: the reason per filter and the nearest seed with its fix.
    set_seed_taints(&client, "s2", &["dedicated", "maintenance"]).await;
    create_shoot(&client, "dev", "later").await;
    let v = json_out(&explain(&proxy.kubeconfig, "garden-dev/later", "json").await);
    assert_eq!(v["verdict"], "unschedulable", "{v:#}");
    assert!(v["seed"].is_null() && v["record"].is_null(), "{v:#}");
    assert_eq!(
        v["now"]["rejected"],
        json!([{"stage": "Taints", "seeds": 2}])
    );
    assert_eq!(
        v["nearest"]["seed"], "s1",
        "s1 has one taint, s2 two: {v:#}"
    );
    assert_eq!(v["nearest"]["rejectedBy"][0]["stage"], "Taints");

    // Gated: not decided, its gates named.
    let mut gated = shoot_manifest("dev", "held");
    gated["metadata"]["annotations"] = json!({"scheduling.gardener.cloud/gates": "quota-approval"});
    create(
        &raw_ns::<gardener_scheduler::api::Shoot>(&client, "garden-dev"),
        gated,
    )
    .await;
    let v = json_out(&explain(&proxy.kubeconfig, "garden-dev/held", "json").await);
    assert_eq!(v["verdict"], "gated", "{v:#}");
    assert!(
        v["changes"][0].as_str().unwrap().contains("quota-approval"),
        "{v:#}"
    );

    // The HTML page of the same, and an unknown shoot.
    let out = explain(&proxy.kubeconfig, "garden-dev/web", "html").await;
    let page = String::from_utf8_lossy(&out.stdout);
    assert!(page.starts_with("<!DOCTYPE html>") && page.contains("Explain garden-dev/web"));
    let out = explain(&proxy.kubeconfig, "garden-dev/nope", "text").await;
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no shoot garden-dev/nope"));

    let requests = proxy.requests();
    assert!(!requests.is_empty());
    assert!(
        requests.iter().all(|(m, _)| m == "GET"),
        "explain only reads: {requests:?}"
    );
    // the shoot was not moved by any of it
    assert_eq!(seed_of(&get_shoot(&client, "dev", "web").await), Some("s1"));
}

/// With `bindingMode: Patch` the record travels in the same patch that sets the seed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_patch_binding_mode_carries_the_record_too() {
    let api = ApiServer::start_crd_cluster("record-patch");
    let client = api.client().await;
    base_landscape(&client, "dev").await;
    create_seed(&client, "s1", 10, &[]).await;
    let mut scheduler = Scheduler::start(
        &api,
        "record-patch",
        SchedulerOptions {
            binding_mode: "Patch",
            shoot_config: "decisionRecord: true\n",
            ..Default::default()
        },
    );
    scheduler.wait_ready().await;
    create_shoot(&client, "dev", "web").await;
    let shoot = bound_shoot(&client, "the shoot bound", "dev", "web").await;
    let record = record_of(&shoot).expect("the record, set by the patch");
    assert_eq!(record["seed"], "s1");
    assert_eq!(record["v"], 1);
}

//! `plan drain` and `plan rebalance --kubeconfig`: the landscape read from a real API server
//! (through the recording proxy of the what-if tests), read-only, and the errors of an unknown
//! seed, a forbidden list and an unreachable cluster.

use std::path::Path;
use std::process::Output;

use gardener_scheduler::api::Seed;
use kube::api::{Patch, PatchParams};
use serde_json::{Value, json};

use crate::support::*;
use crate::whatif::{RecordingProxy, json_out, kubeconfig_for, run_cli};

/// Runs `plan` off the async runtime's threads.
async fn plan(kubeconfig: &Path, rest: &[&str]) -> Output {
    let mut args: Vec<String> = vec!["plan".into()];
    args.extend(rest.iter().map(|s| s.to_string()));
    args.extend([
        "--kubeconfig".to_string(),
        kubeconfig.display().to_string(),
        "--now".into(),
        "2026-01-01T00:00:00Z".into(),
    ]);
    run_cli(args).await
}

/// (shoot, from, to) of every move.
pub(crate) fn moves(v: &Value) -> Vec<(String, String, String)> {
    elements(v, "moves")
        .map(|m| (string(m, "shoot"), string(m, "from"), string(m, "to")))
        .collect()
}

/// A seed a control plane can migrate to and from: a backup, and its buckets ready.
pub(crate) async fn migratable_seed(client: &kube::Client, name: &str, shoots: u32) {
    create_seed(client, name, shoots, &[]).await;
    raw::<Seed>(client)
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"spec": {"backup": {"provider": "local", "region": "local-1",
                "credentialsRef": {"apiVersion": "v1", "kind": "Secret", "name": "backup-local", "namespace": "garden"}}}})),
        )
        .await
        .unwrap();
    let status = json!({"status": {"conditions": [
        {"type": "GardenletReady", "status": "True", "reason": "GardenletReady"},
        {"type": "BackupBucketsReady", "status": "True", "reason": "BackupBucketsReady"}]}});
    raw::<Seed>(client)
        .patch_status(name, &PatchParams::default(), &Patch::Merge(&status))
        .await
        .unwrap();
}

/// s1 holds three shoots (one with a maintenance window 22:00-23:00 UTC), s2 one, s3 none;
/// `nobackup` has no backup, so nothing can migrate onto it.
async fn landscape(client: &kube::Client) {
    base_landscape(client, "pl").await;
    migratable_seed(client, "s1", 10).await;
    migratable_seed(client, "s2", 10).await;
    migratable_seed(client, "s3", 10).await;
    create_seed(client, "nobackup", 10, &[]).await;
    let mut windowed = shoot_manifest("pl", "a");
    windowed["spec"]["seedName"] = "s1".into();
    windowed["spec"]["maintenance"] =
        json!({"timeWindow": {"begin": "220000+0000", "end": "230000+0000"}});
    raw_ns::<gardener_scheduler::api::Shoot>(client, "garden-pl")
        .create(
            &Default::default(),
            &serde_json::from_value(windowed).unwrap(),
        )
        .await
        .unwrap();
    create_bound_shoot(client, "pl", "b", "s1").await;
    create_bound_shoot(client, "pl", "c", "s1").await;
    create_bound_shoot(client, "pl", "d", "s2").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn drain_and_rebalance_plan_from_the_live_landscape_and_write_nothing() {
    let api = ApiServer::start("plan");
    let client = api.client().await;
    landscape(&client).await;
    let proxy = RecordingProxy::start(&api, "plan", None).await;

    let v = json_out(&plan(&proxy.kubeconfig, &["drain", "s1", "-o", "json"]).await);
    let got = moves(&v);
    let mut shoots: Vec<&str> = got.iter().map(|(s, _, _)| s.as_str()).collect();
    shoots.sort();
    assert_eq!(
        shoots,
        ["garden-pl/a", "garden-pl/b", "garden-pl/c"],
        "{v:#}"
    );
    for (shoot, from, to) in &got {
        assert_eq!(from, "s1", "{shoot}");
        assert!(
            to == "s2" || to == "s3",
            "{shoot} -> {to}: only seeds with a backup"
        );
    }
    assert!(v["blocked"].as_array().unwrap().is_empty(), "{v:#}");
    // the window comes from the shoot's document as the cluster stores it
    let a = elements(&v, "moves")
        .find(|m| m["shoot"] == "garden-pl/a")
        .unwrap();
    assert_eq!(a["timing"]["state"], "at", "{a:#}");
    assert_eq!(a["timing"]["start"], "2026-01-01T22:00:00Z", "{a:#}");

    // -o yaml: binding documents made from the cluster's shoots
    let out = plan(&proxy.kubeconfig, &["drain", "s1", "-o", "yaml"]).await;
    assert_success(&out);
    let yaml = String::from_utf8_lossy(&out.stdout);
    assert_eq!(yaml.matches("kind: Shoot").count(), 3, "{yaml}");

    // rebalance: the most loaded seed gives one shoot to the empty one
    let v = json_out(
        &plan(
            &proxy.kubeconfig,
            &["rebalance", "--max-moves", "1", "-o", "json"],
        )
        .await,
    );
    let got = moves(&v);
    assert_eq!(got.len(), 1, "{v:#}");
    assert_eq!(
        (got[0].1.as_str(), got[0].2.as_str()),
        ("s1", "s3"),
        "{v:#}"
    );

    let requests = proxy.requests();
    assert!(!requests.is_empty());
    assert!(
        requests.iter().all(|(m, _)| m == "GET"),
        "read-only: {requests:?}"
    );
    // the cluster is as it was: every shoot still on its seed
    for (name, seed) in [("a", "s1"), ("b", "s1"), ("c", "s1"), ("d", "s2")] {
        let s = raw_ns::<gardener_scheduler::api::Shoot>(&client, "garden-pl")
            .get(name)
            .await
            .unwrap();
        assert_eq!(s.data["spec"]["seedName"], seed, "{name}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn live_plan_errors_are_clear_and_never_a_partial_plan() {
    let api = ApiServer::start("plan-errors");
    let client = api.client().await;
    landscape(&client).await;

    // a seed the cluster does not have: a usage error naming it
    let out = plan(&api.what_if_identity(), &["drain", "no-such-seed"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(
        stderr.contains("seed \"no-such-seed\": no Seed with that name in the landscape"),
        "{stderr}"
    );

    // seeds cannot be listed: no plan at all
    let no_seeds = RecordingProxy::start(&api, "plan-no-seeds", Some("/seeds")).await;
    let out = plan(&no_seeds.kubeconfig, &["drain", "s1"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "no partial plan");
    assert!(
        stderr.contains("listing Seeds: forbidden") && stderr.contains("nothing was planned"),
        "{stderr}"
    );

    // shoots cannot be listed: a plan without them would drain nothing; no plan at all
    let no_shoots = RecordingProxy::start(&api, "plan-no-shoots", Some("/shoots")).await;
    let out = plan(&no_shoots.kubeconfig, &["rebalance", "--max-moves", "2"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty(), "no partial plan");
    assert!(stderr.contains("listing Shoots: forbidden"), "{stderr}");

    // nothing listens there
    let nowhere = api.state.join("kubeconfig-plan-nowhere");
    std::fs::write(
        &nowhere,
        kubeconfig_for(&format!("http://127.0.0.1:{}", free_port()), "unused"),
    )
    .unwrap();
    let out = plan(&nowhere, &["drain", "s1"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(out.stdout.is_empty());
    assert!(
        stderr.contains("the cluster could not be reached")
            && stderr.contains("nothing was planned"),
        "{stderr}"
    );

    // a kubeconfig that is not one: a usage error naming it
    let bad = api.state.join("kubeconfig-plan-bad");
    std::fs::write(&bad, "clusters: [").unwrap();
    let out = plan(&bad, &["drain", "s1"]).await;
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("kubeconfig-plan-bad"), "{stderr}");
    assert!(out.stdout.is_empty());
}

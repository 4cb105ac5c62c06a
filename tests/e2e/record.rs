use crate::support::*;

/// Seeds s1 and s2 (protected) in the garden, a scheduler `name` writing decision records, and
/// the shoot dev/web: the scheduler and the shoot once bound.
pub(crate) async fn recorded_web_shoot(
    api: &ApiServer,
    client: &kube::Client,
    name: &str,
) -> (Scheduler, gardener_scheduler::api::Shoot) {
    base_landscape(client, "dev").await;
    create_seed(client, "s1", 10, &[]).await;
    create_seed(client, "s2", 10, &["seed.gardener.cloud/protected"]).await;
    let mut scheduler = Scheduler::start(
        api,
        name,
        SchedulerOptions {
            shoot_config: "decisionRecord: true\n",
            ..Default::default()
        },
    );
    scheduler.wait_ready().await;
    create_shoot(client, "dev", "web").await;
    let shoot = bound_shoot(client, "the shoot bound", "dev", "web").await;
    (scheduler, shoot)
}

/// With `decisionRecord: true` the binding carries the record: the chosen seed, its scores, the
/// profile, the version; small, and naming no other seed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bound_shoot_carries_its_decision_record_from_the_same_binding() {
    let api = ApiServer::start("record");
    let client = api.client().await;
    let (_scheduler, shoot) = recorded_web_shoot(&api, &client, "record").await;
    let text = shoot
        .metadata
        .annotations
        .as_ref()
        .and_then(|a| a.get("scheduling.gardener.cloud/decision"))
        .expect("the decision record")
        .clone();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    assert_eq!(v["v"], 1);
    assert_eq!(v["seed"], "s1");
    assert_eq!(v["profile"], "default");
    assert_eq!(v["scheduler"], env!("CARGO_PKG_VERSION"));
    assert!(v["priorities"]["ShootCount"]["score"].is_number(), "{text}");
    assert!(v["total"].is_number(), "{text}");
    assert!(
        v["margin"].is_null(),
        "s2 is protected: s1 was the only feasible seed: {text}"
    );
    assert!(!text.contains("s2"), "{text}");
    assert!(text.len() <= 1024, "{} bytes", text.len());
    eprintln!("decision record: {} bytes: {text}", text.len());
}

use crate::support::*;

/// With `decisionRecord: true` the binding carries the record: the chosen seed, its scores, the
/// profile, the version; small, and naming no other seed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bound_shoot_carries_its_decision_record_from_the_same_binding() {
    let api = ApiServer::start("record");
    let client = api.client().await;
    base_landscape(&client, "dev").await;
    create_seed(&client, "s1", 10, &[]).await;
    create_seed(&client, "s2", 10, &["seed.gardener.cloud/protected"]).await;
    let mut scheduler = Scheduler::start(
        &api,
        "record",
        SchedulerOptions {
            shoot_config: "decisionRecord: true\n",
            ..Default::default()
        },
    );
    scheduler.wait_ready().await;
    create_shoot(&client, "dev", "web").await;
    let shoot = eventually("the shoot bound", || async {
        let s = get_shoot(&client, "dev", "web").await;
        seed_of(&s).is_some().then_some(s)
    })
    .await;
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

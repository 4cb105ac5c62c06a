use std::sync::Arc;

use kube::api::{Patch, PatchParams};

use crate::support::*;
use gardener_scheduler::api::Shoot;
use gardener_scheduler::controller::{self, Attempt, Controller};

/// A shoot that someone else assigns while it waits is never overwritten, even once a seed fits.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_shoot_assigned_by_someone_else_while_waiting_is_left_alone() {
    let (api, client) = ApiServer::start_with_landscape("left-alone", "dev").await;
    create_seed(&client, "tainted", 5, &["seed.gardener.cloud/protected"]).await;
    // the seed someone else picks, in a region the scheduler does not consider
    create_seed_in(&client, "manual", "local-2", 5).await;
    create_shoot(&client, "dev", "taken").await;
    let mut scheduler = Scheduler::start(&api, "left-alone", SchedulerOptions::default());
    scheduler.wait_ready().await;
    event_with_reason(
        &client,
        "the failure event",
        "dev",
        "taken",
        "SchedulingFailed",
    )
    .await;

    // someone else (an operator, another scheduler) assigns the shoot
    assign_seed(&client, "garden-dev", "taken", "manual").await;
    set_seed_taints(&client, "tainted", &[]).await;
    // a shoot created after both changes is bound: the scheduler has seen them
    create_shoot(&client, "dev", "later").await;
    seed_when_bound(&client, "the later shoot to be bound", "dev", "later").await;
    assert_eq!(
        seed_of(&get_shoot(&client, "dev", "taken").await),
        Some("manual")
    );
    assert!(
        !shoot_events(&client, "dev", "taken")
            .await
            .iter()
            .any(|e| e.reason.as_deref() == Some("SchedulingSuccessful"))
    );
}

fn config(mode: &str) -> gardener_scheduler::compile::Compiled {
    gardener_scheduler::compile::load_str(&format!(
        "leaderElection: {{leaderElect: false}}\nschedulers: {{shoot: {{bindingMode: {mode}}}}}\n"
    ))
    .unwrap()
}

/// The conflict path, step by step in-process against the real API server: the decision is
/// based on a version of the shoot that has changed on the server since.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bind_based_on_a_stale_shoot_gets_a_conflict_and_never_overwrites_a_seed() {
    for mode in ["Binding", "Patch"] {
        // Patch writes spec.seedName on the shoot itself, which only a CRD cluster allows
        let api = if mode == "Binding" {
            ApiServer::start("conflict")
        } else {
            ApiServer::start_crd_cluster("conflict-patch")
        };
        let client = api.client().await;
        base_landscape(&client, "dev").await;
        create_seed(&client, "s1", 5, &[]).await;
        // the seed someone else picks, in a region the scheduler does not consider
        create_seed_in(&client, "elsewhere", "local-2", 5).await;
        let c = Controller::new(config(mode), client.clone()).unwrap();
        let shared = Arc::clone(c.shared());
        for seed in kube::Api::<gardener_scheduler::api::Seed>::all(client.clone())
            .list(&Default::default())
            .await
            .unwrap()
        {
            shared.lock().apply_seed(&seed);
        }
        for cp in kube::Api::<gardener_scheduler::api::CloudProfile>::all(client.clone())
            .list(&Default::default())
            .await
            .unwrap()
        {
            shared.lock().apply_cloud_profile(&cp);
        }
        let shoots = kube::Api::<Shoot>::namespaced(client.clone(), "garden-dev");

        // 1. changed meanwhile but still pending: 409, re-read, decided again, bound
        let a = format!("relabelled-{}", mode.to_lowercase());
        create_shoot(&client, "dev", &a).await;
        let stale = shoots.get(&a).await.unwrap();
        shared.lock().apply_shoot(&stale);
        shoots
            .patch(
                &a,
                &PatchParams::default(),
                &Patch::Merge(serde_json::json!({"metadata": {"labels": {"x": "y"}}})),
            )
            .await
            .unwrap();
        let key = format!("garden-dev/{a}");
        assert_eq!(
            controller::schedule_one(&shared, &key).await,
            Attempt::Conflict,
            "{mode}"
        );
        assert_eq!(
            shared.lock().snapshot.usage().shoots_on("s1"),
            0,
            "{mode}: assumption dropped"
        );
        assert_eq!(
            controller::schedule_one(&shared, &key).await,
            Attempt::Scheduled("s1".into()),
            "{mode}"
        );
        assert_eq!(seed_of(&shoots.get(&a).await.unwrap()), Some("s1"));

        // 2. assigned by someone else meanwhile: left alone
        let b = format!("taken-{}", mode.to_lowercase());
        create_shoot(&client, "dev", &b).await;
        let stale = shoots.get(&b).await.unwrap();
        shared.lock().apply_shoot(&stale);
        assign_seed(&client, "garden-dev", &b, "elsewhere").await;
        let key = format!("garden-dev/{b}");
        let attempt = controller::schedule_one(&shared, &key).await;
        assert!(
            matches!(&attempt, Attempt::LeftAlone(s) if s == "elsewhere")
                || attempt == Attempt::Conflict,
            "{mode}: {attempt:?}"
        );
        // whatever path it took, deciding again finds nothing to do
        assert_eq!(
            controller::schedule_one(&shared, &key).await,
            Attempt::Skipped,
            "{mode}"
        );
        assert_eq!(
            seed_of(&shoots.get(&b).await.unwrap()),
            Some("elsewhere"),
            "{mode}: never overwritten"
        );
        assert_eq!(
            shared.lock().snapshot.usage().shoots_on("elsewhere"),
            1,
            "{mode}: counted where it is"
        );
        assert!(shared.metrics().conflicts.get() >= 2, "{mode}");
        assert!(
            !shoot_events(&client, "dev", &b)
                .await
                .iter()
                .any(|e| e.reason.as_deref() == Some("SchedulingFailed")),
            "{mode}: a conflict is no failure"
        );
    }
}

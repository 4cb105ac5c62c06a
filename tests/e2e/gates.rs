use kube::api::{Patch, PatchParams};
use serde_json::json;

use gardener_scheduler::api::Shoot;

use crate::support::*;

const GATES: &str = "scheduling.gardener.cloud/gates";

async fn create_gated_shoot(client: &kube::Client, project: &str, name: &str, gates: &str) {
    let mut shoot = shoot_manifest(project, name);
    shoot["metadata"]["annotations"] = json!({ GATES: gates });
    create(
        &raw_ns::<Shoot>(client, &format!("garden-{project}")),
        shoot,
    )
    .await;
}

/// Sets the gates annotation (`None` removes it).
async fn set_gates(client: &kube::Client, project: &str, name: &str, gates: Option<&str>) {
    raw_ns::<Shoot>(client, &format!("garden-{project}"))
        .patch(
            name,
            &PatchParams::default(),
            &Patch::Merge(&json!({"metadata": {"annotations": { GATES: gates }}})),
        )
        .await
        .unwrap();
}

/// The note of the shoot's `SchedulingGated` event whose note contains `part`.
async fn gated_event(
    client: &kube::Client,
    project: &str,
    name: &str,
    part: &str,
) -> (String, String) {
    eventually(
        &format!("a SchedulingGated event with {part:?}"),
        || async {
            shoot_events(client, project, name)
                .await
                .into_iter()
                .filter(|e| e.reason.as_deref() == Some("SchedulingGated"))
                .map(|e| (e.type_.unwrap_or_default(), e.note.unwrap_or_default()))
                .find(|(_, note)| note.contains(part))
        },
    )
    .await
}

/// A gated shoot waits with `SchedulingGated` naming its gates, counted as `gated`; removing
/// one gate keeps it waiting, removing the last binds it at once although its backoff is long.
/// A malformed list is a Warning that names the problem, and the shoot waits until it is fixed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gated_shoot_waits_until_its_last_gate_is_removed() {
    let (api, client) = ApiServer::start_with_landscape("gates", "dev").await;
    create_seed(&client, "s1", 10, &[]).await;
    // A retry after a backoff could not bind within the test's deadline: only the change of
    // the gates can.
    let mut scheduler = Scheduler::start(
        &api,
        "gates",
        SchedulerOptions {
            backoff: ("10m", "10m"),
            ..Default::default()
        },
    );
    scheduler.wait_ready().await;
    create_gated_shoot(&client, "dev", "held", "quota-approval,change-freeze").await;
    create_gated_shoot(&client, "dev", "typo", "quota approval").await;

    let (type_, note) = gated_event(&client, "dev", "held", "quota-approval").await;
    assert_eq!(type_, "Normal");
    assert_eq!(
        note,
        "Scheduling gated: waiting for scheduling gate(s) quota-approval, change-freeze"
    );
    let (type_, note) = gated_event(&client, "dev", "typo", "malformed").await;
    assert_eq!(type_, "Warning");
    assert!(
        note.contains("metadata.annotations[scheduling.gardener.cloud/gates]: item 1 \"quota approval\" is not a qualified name"),
        "{note}"
    );
    let gated =
        |s: &Scheduler| s.metric("gardener_scheduler_pending_shoots_by_reason{reason=\"gated\"}");
    eventually("both shoots counted as gated", || async {
        (gated(&scheduler) == Some(2.0)).then_some(())
    })
    .await;

    set_gates(&client, "dev", "held", Some("change-freeze")).await;
    let (_, note) = gated_event(&client, "dev", "held", "gate(s) change-freeze").await;
    assert_eq!(
        note,
        "Scheduling gated: waiting for scheduling gate(s) change-freeze"
    );
    assert_eq!(seed_of(&get_shoot(&client, "dev", "held").await), None);

    set_gates(&client, "dev", "held", None).await;
    let seed = seed_when_bound(
        &client,
        "the shoot bound once its last gate is gone",
        "dev",
        "held",
    )
    .await;
    assert_eq!(seed, "s1");
    assert_eq!(seed_of(&get_shoot(&client, "dev", "typo").await), None);

    set_gates(&client, "dev", "typo", Some("")).await;
    seed_when_bound(&client, "the fixed shoot bound", "dev", "typo").await;
    eventually("no shoot counted as gated", || async {
        (gated(&scheduler) == Some(0.0)).then_some(())
    })
    .await;
    assert!(scheduler.is_running());
    for name in ["held", "typo"] {
        let shoot = get_shoot(&client, "dev", name).await;
        assert!(
            shoot
                .status
                .as_ref()
                .and_then(|s| s.last_operation.as_ref())
                .is_none(),
            "a gate is not a failure"
        );
    }
}

/// A gate and a freeze window both hold a shoot: the gated report says the freeze holds it
/// too, and once the gate is gone the freeze alone defers it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gate_and_a_freeze_both_hold_and_the_report_says_which() {
    let (api, client) = ApiServer::start_with_landscape("gates-freeze", "dev").await;
    create_seed(&client, "s1", 10, &[]).await;
    let cfg = api.state.join("scheduler-gates-freeze.yaml");
    std::fs::write(
        &cfg,
        r#"apiVersion: scheduler.config.gardener.cloud/v1alpha1
kind: SchedulerConfiguration
logFormat: text
leaderElection:
  leaderElect: false
schedulers:
  shoot:
    backoff: {initial: 1s, max: 4s}
    profiles:
    - id: year-end
      freeze: true
"#,
    )
    .unwrap();
    let mut scheduler = Scheduler::start_with_config(&api, "gates-freeze", &cfg);
    scheduler.wait_ready().await;
    create_gated_shoot(&client, "dev", "both", "quota-approval").await;

    let (_, note) = gated_event(&client, "dev", "both", "quota-approval").await;
    assert_eq!(
        note,
        "Scheduling gated: waiting for scheduling gate(s) quota-approval; also deferred: freeze window \"year-end\""
    );
    set_gates(&client, "dev", "both", None).await;
    let deferred = event_with_reason(
        &client,
        "the SchedulingDeferred event",
        "dev",
        "both",
        "SchedulingDeferred",
    )
    .await;
    assert_eq!(
        deferred.note.as_deref(),
        Some("Scheduling deferred: freeze window \"year-end\"")
    );
    assert_eq!(seed_of(&get_shoot(&client, "dev", "both").await), None);
}

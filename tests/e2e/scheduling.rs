use std::time::{Duration, Instant};

use kube::api::{Patch, PatchParams};

use crate::support::*;
use gardener_scheduler::api::{Seed, Shoot};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_shoot_is_bound_to_the_least_used_seed_with_a_success_event() {
    let (api, client) = ApiServer::start_with_landscape("bind", "dev").await;
    create_seed(&client, "busy", 10, &[]).await;
    create_seed(&client, "idle", 10, &[]).await;
    create_seed(&client, "protected", 10, &["seed.gardener.cloud/protected"]).await;
    for name in ["running-1", "running-2"] {
        let mut m = shoot_manifest("dev", name);
        m["spec"]["seedName"] = "busy".into();
        let obj = serde_json::from_value(m).unwrap();
        raw_ns::<Shoot>(&client, "garden-dev")
            .create(&Default::default(), &obj)
            .await
            .unwrap();
    }

    let mut scheduler = Scheduler::start(&api, "bind", SchedulerOptions::default());
    scheduler.wait_ready().await;
    create_shoot(&client, "dev", "new").await;

    let seed = seed_when_bound(&client, "the shoot to be bound", "dev", "new").await;
    assert_eq!(
        seed, "idle",
        "ShootCount prefers the seed with fewer shoots; tainted seeds are out"
    );

    let event = event_with_reason(
        &client,
        "the SchedulingSuccessful event",
        "dev",
        "new",
        "SchedulingSuccessful",
    )
    .await;
    assert_eq!(event.type_.as_deref(), Some("Normal"));
    // upstream's recorder name, action and note: this scheduler runs upstream's configuration
    assert_eq!(
        event.reporting_controller.as_deref(),
        Some("shoot-scheduler")
    );
    assert_eq!(event.action.as_deref(), Some("Reconcile"));
    assert_eq!(
        event.note.as_deref(),
        Some("Scheduled to seed \"idle\""),
        "upstream's success note, word for word"
    );

    // the running shoots were left as they were
    assert_eq!(
        seed_of(&get_shoot(&client, "dev", "running-1").await),
        Some("busy")
    );
    let metrics = eventually("metrics showing the bind", || async {
        let m = scheduler.metrics();
        m.contains("gardener_scheduler_schedule_attempts_total{result=\"scheduled\",profile=\"default\"} 1")
            .then_some(m)
    })
    .await;
    for line in [
        "gardener_scheduler_seed_shoots{seed=\"idle\"} 1",
        "gardener_scheduler_seed_shoots{seed=\"busy\"} 2",
        "gardener_scheduler_pending_shoots 0",
        "gardener_scheduler_leader 1",
    ] {
        assert!(
            metrics.lines().any(|l| l == line),
            "missing {line:?}:\n{metrics}"
        );
    }
    assert!(metrics.contains("gardener_scheduler_scheduling_attempt_duration_seconds_bucket"));
    assert_eq!(
        http_get(scheduler.health_port, "/healthz").map(|r| r.0),
        Some(200)
    );
    assert!(
        scheduler.terminate().success(),
        "SIGTERM ends the process cleanly"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unschedulable_shoot_reports_why_and_is_bound_soon_after_a_seed_fits() {
    let (api, client) = ApiServer::start_with_landscape("unschedulable", "dev").await;
    create_seed(&client, "tainted", 1, &["seed.gardener.cloud/protected"]).await;
    create_shoot(&client, "dev", "first").await;
    // status written by others must survive the scheduler's lastOperation patch
    raw_ns::<Shoot>(&client, "garden-dev")
        .patch_status(
            "first",
            &PatchParams::default(),
            &Patch::Merge(serde_json::json!({"status": {"technicalID": "shoot--dev--first", "lastOperation": {"progress": 0}}})),
        )
        .await
        .unwrap();

    // A long backoff: a retry within seconds can only come from reacting to the change.
    let opts = SchedulerOptions {
        backoff: ("60s", "1000s"),
        ..Default::default()
    };
    let mut scheduler = Scheduler::start(&api, "unschedulable", opts);
    scheduler.wait_ready().await;

    let event = event_with_reason(
        &client,
        "the SchedulingFailed event",
        "dev",
        "first",
        "SchedulingFailed",
    )
    .await;
    assert_eq!(event.type_.as_deref(), Some("Warning"));
    let note = event.note.unwrap_or_default();
    assert!(
        note.starts_with("Failed to schedule Shoot: 0/1 seeds are available: 1 seed(s) had taints that the shoot does not tolerate."),
        "{note}"
    );
    assert!(
        note.contains("seed.gardener.cloud/protected"),
        "names what to change: {note}"
    );

    let shoot = eventually("status.lastOperation", || async {
        let s = get_shoot(&client, "dev", "first").await;
        s.status
            .as_ref()
            .and_then(|st| st.last_operation.as_ref())
            .filter(|op| op.state == "Pending")
            .is_some()
            .then_some(s)
    })
    .await;
    let op = shoot
        .status
        .as_ref()
        .unwrap()
        .last_operation
        .as_ref()
        .unwrap();
    assert_eq!(op.type_, "Create");
    assert!(
        op.description
            .starts_with("Failed to schedule Shoot: 0/1 seeds are available:"),
        "{}",
        op.description
    );
    assert!(op.last_update_time.is_some());
    let raw = raw_ns::<Shoot>(&client, "garden-dev")
        .get("first")
        .await
        .unwrap();
    assert_eq!(
        raw.data["status"]["technicalID"], "shoot--dev--first",
        "other status fields are kept"
    );
    assert_eq!(raw.data["status"]["lastOperation"]["progress"], 0);
    assert!(seed_of(&shoot).is_none());

    // removing the taint makes it fit: bound within seconds, long before the 60 s backoff
    let changed = Instant::now();
    set_seed_taints(&client, "tainted", &[]).await;
    let seed = eventually(
        "the shoot to be bound after the taint was removed",
        || async { seed_of(&get_shoot(&client, "dev", "first").await).map(str::to_string) },
    )
    .await;
    assert_eq!(seed, "tainted");
    let waited = changed.elapsed();
    assert!(
        waited < Duration::from_secs(20),
        "reacted to the change after {waited:?}, not to the backoff"
    );

    // the only seed is now full; a new shoot waits until a seed appears
    create_shoot(&client, "dev", "second").await;
    eventually("the second shoot's failure", || async {
        shoot_events(&client, "dev", "second")
            .await
            .into_iter()
            .find(|e| e.reason.as_deref() == Some("SchedulingFailed"))
            .filter(|e| {
                e.note
                    .as_deref()
                    .is_some_and(|n| n.contains("no capacity left"))
            })
    })
    .await;
    let changed = Instant::now();
    create_seed(&client, "fresh", 5, &[]).await;
    let seed = eventually(
        "the second shoot to be bound after a seed appeared",
        || async { seed_of(&get_shoot(&client, "dev", "second").await).map(str::to_string) },
    )
    .await;
    assert_eq!(seed, "fresh");
    let waited = changed.elapsed();
    assert!(
        waited < Duration::from_secs(20),
        "reacted to the new seed after {waited:?}"
    );
    let seeds: Vec<Seed> = kube::Api::<Seed>::all(client.clone())
        .list(&Default::default())
        .await
        .unwrap()
        .items;
    assert_eq!(seeds.len(), 2);
    assert!(
        scheduler
            .metric("gardener_scheduler_schedule_attempts_total{result=\"unschedulable\",profile=\"default\"}")
            .is_some_and(|n| n >= 2.0)
    );
}

/// The four shoots of example/dev, once every one is bound.
async fn example_shoots_bound(client: &kube::Client) -> Vec<Shoot> {
    let shoots = eventually("all example shoots to be bound", || async {
        let shoots = list_shoots(client, "local").await;
        shoots
            .iter()
            .all(|s| seed_of(s).is_some())
            .then_some(shoots)
    })
    .await;
    assert_eq!(shoots.len(), 4);
    shoots
}

/// The YAML of the heredoc after `kubectl apply -f - <<'EOF'` in `doc`, and the comment line
/// (`# ...`) after the first later line that contains `after`.
fn doc_example(doc: &str, after: &str) -> (String, String) {
    let text =
        std::fs::read_to_string(std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(doc))
            .unwrap();
    let heredoc = text.split("kubectl apply -f - <<'EOF'\n").nth(1).unwrap();
    let yaml = heredoc.split("\nEOF").next().unwrap().to_string();
    let mut lines = heredoc.lines().skip_while(|l| !l.contains(after));
    lines.next();
    let said = lines.next().unwrap().trim_start_matches("# ").to_string();
    (yaml, said)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_dev_setup_binds_the_example_shoots_and_the_local_setup_page_s_example_as_it_says() {
    let api = ApiServer::start("dev");
    let client = api.client().await;
    apply_example_dev(&client).await;
    let mut scheduler = Scheduler::start_with_config(
        &api,
        "dev",
        &std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("config/dev-scheduler.yaml"),
    );
    scheduler.wait_ready().await;
    let shoots = example_shoots_bound(&client).await;
    for s in &shoots {
        assert!(
            ["local-a", "local-b", "local-c"].contains(&seed_of(s).unwrap()),
            "{:?}",
            s.spec.seed_name
        );
    }
    assert!(
        scheduler.logs().contains("binding_mode=Binding"),
        "{}",
        scheduler.logs()
    );

    // docs/development/local-setup.md, "Things to try": a shoot that does not fit says why and
    // is bound once a seed gets the label it asks for
    let (yaml, said) = doc_example("docs/development/local-setup.md", "jsonpath");
    let file = api.state.join("picky.yaml");
    std::fs::write(&file, yaml).unwrap();
    api.kubectl(&["apply", "-f", &file.display().to_string()]);
    eventually(&format!("picky's status to say {said:?}"), || async {
        let shoot = get_shoot(&client, "local", "picky").await;
        let last = shoot.status?.last_operation?;
        (last.description == said).then_some(())
    })
    .await;
    api.kubectl(&["label", "seed", "local-b", "tier=gold"]);
    let seed = seed_when_bound(&client, "picky bound", "local", "picky").await;
    assert_eq!(seed, "local-b");
}

/// On a cluster that serves Gardener's kinds as CRDs (no `shoots/binding`), the development
/// configuration with `bindingMode: Patch` from the environment, as local-setup.md says.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_a_crd_cluster_the_dev_setup_binds_by_patching_spec_seed_name() {
    let api = ApiServer::start_crd_cluster("dev-patch");
    let client = api.client().await;
    apply_example_dev(&client).await;
    let mut scheduler = Scheduler::start(
        &api,
        "dev-patch",
        SchedulerOptions {
            binding_mode: "Patch",
            ..Default::default()
        },
    );
    scheduler.wait_ready().await;
    let shoots = example_shoots_bound(&client).await;
    for s in &shoots {
        // a merge patch with the observed resourceVersion, by the scheduler's field manager
        let raw = raw_ns::<Shoot>(&client, "garden-local")
            .get(s.metadata.name.as_deref().unwrap())
            .await
            .unwrap();
        let managers: Vec<String> = raw
            .metadata
            .managed_fields
            .unwrap_or_default()
            .into_iter()
            .filter_map(|m| m.manager)
            .collect();
        assert!(
            managers.iter().any(|m| m == "gardener-scheduler"),
            "{managers:?}"
        );
    }
    assert!(
        scheduler.logs().contains("binding_mode=Patch"),
        "{}",
        scheduler.logs()
    );
}

//! Request-level faults (server errors, conflicts, no answer, failing watches), injected with
//! tower-test's mock service in place of the API server.

use std::time::Duration;

use crate::api::Shoot;
use crate::compile::load_str;
use crate::config::BindingMode;
use crate::controller::events::refusals;
use crate::controller::feed::watch;
use crate::controller::*;
use crate::fixtures::{SeedBuilder, ShootBuilder};
use http::Response;
use kube::Client;
use kube::client::Body;
use scenario::*;
use serde_json::{Value, json};

#[tokio::test]
async fn a_binding_carries_the_whole_shoot_and_the_observed_resource_version() {
    let (client, mut api) = mock_api();
    let task = spawn_bind(client, BindingMode::Binding);
    let get = api.reads_shoot().await;
    get.reply(server_shoot("5", None));
    let put = api.binds_shoot().await;
    assert_eq!(put.method, "PUT");
    assert_eq!(put.body["spec"]["seedName"], "seed-1");
    assert_eq!(put.body["metadata"]["resourceVersion"], "5");
    assert_eq!(
        put.body["spec"]["kubernetes"]["version"], "1.33.2",
        "unmodelled fields are kept"
    );
    assert!(
        put.query.contains("fieldManager=gardener-scheduler"),
        "{}",
        put.query
    );
    put.reply(server_shoot("6", Some("seed-1")));
    assert_eq!(task.await.unwrap().unwrap(), "6");
}

#[tokio::test]
async fn binding_outcomes_are_told_apart() {
    // (response to the binding PUT, expected outcome)
    type Expect = fn(&BindError) -> bool;
    let cases: [(u16, &str, Expect); 6] = [
        (409, "Conflict", |e| matches!(e, BindError::Conflict)),
        // a 5xx does not prove the write was refused: a gateway or an API server that lost
        // its etcd answer sends one after the write was committed
        (500, "InternalError", |e| {
            e.outcome_unknown() && e.code().as_deref() == Some("500")
        }),
        (502, "BadGateway", |e| {
            e.outcome_unknown() && e.code().as_deref() == Some("502")
        }),
        (504, "Timeout", |e| {
            e.outcome_unknown() && e.code().as_deref() == Some("504")
        }),
        (422, "Invalid", |e| {
            matches!(e, BindError::Rejected { .. }) && !e.outcome_unknown()
        }),
        // throttled before anything was done: a refusal, retried by the queue
        (429, "TooManyRequests", |e| {
            matches!(e, BindError::Rejected { .. }) && e.code().as_deref() == Some("429")
        }),
    ];
    for (code, reason, expected) in cases {
        let (client, mut api) = mock_api();
        let task = spawn_bind(client, BindingMode::Binding);
        api.returns_shoot("5", None).await;
        api.refuses(code, reason).await;
        let err = task.await.unwrap().unwrap_err();
        assert!(expected(&err), "{code}: {err:?}");
    }
}

#[tokio::test]
async fn a_seed_already_set_on_the_server_is_never_overwritten() {
    let (client, mut api) = mock_api();
    let task = spawn_bind(client, BindingMode::Binding);
    api.returns_shoot("8", Some("manual")).await;
    let err = task.await.unwrap().unwrap_err();
    assert!(
        matches!(&err, BindError::AlreadyAssigned(s) if s == "manual"),
        "{err:?}"
    );
    api.is_quiet().await;
}

#[tokio::test]
async fn a_missing_binding_subresource_is_named_with_the_fix() {
    let (client, mut api) = mock_api();
    let task = spawn_bind(client, BindingMode::Binding);
    api.returns_shoot("5", None).await;
    api.refuses(404, "NotFound").await;
    api.returns_shoot("5", None).await;
    let err = task.await.unwrap().unwrap_err();
    assert!(matches!(err, BindError::NoBindingSubresource), "{err:?}");
    assert!(err.to_string().contains("bindingMode: Patch"));
}

#[tokio::test]
async fn patch_mode_sends_a_merge_patch_guarded_by_the_resource_version() {
    let (client, mut api) = mock_api();
    let task = spawn_bind(client, BindingMode::Patch);
    let patch = api.next().await;
    assert_eq!(
        (patch.method.as_str(), patch.path.as_str()),
        ("PATCH", SHOOT_PATH)
    );
    assert_eq!(patch.content_type, "application/merge-patch+json");
    assert_eq!(
        patch.body,
        json!({"metadata": {"resourceVersion": "5"}, "spec": {"seedName": "seed-1"}})
    );
    patch.fail(409, "Conflict");
    assert!(matches!(
        task.await.unwrap().unwrap_err(),
        BindError::Conflict
    ));
}

#[tokio::test(start_paused = true)]
async fn no_answer_is_an_unknown_outcome_not_a_failure() {
    let (client, mut api) = mock_api();
    let task = spawn_bind(client, BindingMode::Binding);
    api.returns_shoot("5", None).await;
    let _hanging = api.next().await; // never answered
    let err = task.await.unwrap().unwrap_err();
    assert!(err.outcome_unknown(), "{err:?}");
}

// ---- whole attempts, as a worker runs them

#[tokio::test]
async fn a_server_error_while_binding_frees_the_slot_retries_and_reports_scheduling_failed() {
    let (client, mut api) = mock_api();
    let shared = controller(client);
    let attempt = spawn_attempt(&shared);
    api.refuses(500, "InternalError").await;
    // upstream reports every binding error but a 409 as a failed scheduling
    let (event, status) = api.accepts_failure_report().await;
    assert_eq!(attempt.await.unwrap(), Attempt::Error);
    assert_eq!(event["reason"], "SchedulingFailed");
    assert_eq!(event["type"], "Warning");
    assert_eq!(event["action"], "Reconcile");
    assert_eq!(event["reportingController"], "shoot-scheduler");
    let note = event["note"].as_str().unwrap();
    assert!(
        note.starts_with("Failed to schedule Shoot: reading shoot: "),
        "{note}"
    );
    let op = &status["status"]["lastOperation"];
    assert_eq!(op["type"], "Create");
    assert_eq!(op["state"], "Pending");
    assert_eq!(op["description"], note);
    assert!(op["lastUpdateTime"].is_string(), "{op}");
    api.is_quiet().await;
    assert_eq!(
        shared.lock().snapshot.usage().shoots_on("seed-1"),
        0,
        "assumption dropped"
    );
    assert!(shared.lock().pending("garden-a/s1").is_some());
    assert_eq!(shared.queue().len(), 1, "retried after retrySyncPeriod");
    assert!(shared.metrics().encode().contains(
        "gardener_scheduler_schedule_attempts_total{result=\"error\",profile=\"default\"} 1"
    ));

    // the retry succeeds and reports
    let attempt = spawn_attempt(&shared);
    api.returns_shoot("5", None).await;
    api.returns_shoot("6", Some("seed-1")).await;
    let event = api.next().await;
    assert_eq!(event.method, "POST");
    assert_eq!(
        event.path,
        "/apis/events.k8s.io/v1/namespaces/garden-a/events"
    );
    assert_eq!(event.body["reason"], "SchedulingSuccessful");
    assert_eq!(event.body["reportingController"], "shoot-scheduler");
    assert_eq!(event.body["action"], "Reconcile");
    assert_eq!(event.body["regarding"]["uid"], "u-1");
    // upstream's configuration: upstream's note, word for word
    assert_eq!(event.body["note"], "Scheduled to seed \"seed-1\"");
    event.echo();
    assert_eq!(attempt.await.unwrap(), Attempt::Scheduled("seed-1".into()));
    assert_eq!(
        shared.lock().snapshot.usage().shoots_on("seed-1"),
        1,
        "counted before the watch shows it"
    );
}

#[tokio::test]
async fn a_conflict_rereads_and_leaves_a_shoot_assigned_elsewhere_alone() {
    let (client, mut api) = mock_api();
    let shared = controller(client);
    let attempt = spawn_attempt(&shared);
    api.returns_shoot("5", None).await;
    api.refuses(409, "Conflict").await;
    let reread = api.reads_shoot().await;
    reread.reply(server_shoot("9", Some("other")));
    assert_eq!(attempt.await.unwrap(), Attempt::Conflict);
    assert_eq!(schedule_one(&shared, "garden-a/s1").await, Attempt::Skipped);
    api.is_quiet().await; // no failure event for a conflict
    let st = shared.lock();
    assert_eq!(st.snapshot.usage().shoots_on("seed-1"), 0);
    assert_eq!(st.snapshot.usage().shoots_on("other"), 1);
    assert_eq!(shared.metrics().conflicts.get(), 1);
}

#[tokio::test]
async fn an_unknown_bind_outcome_keeps_the_slot_until_a_read_tells_what_happened() {
    let (client, mut api) = mock_api();
    let shared = controller(client);
    let attempt = spawn_attempt(&shared);
    api.returns_shoot("5", None).await;
    api.drops_connection().await;
    // the attempt reads the shoot at once to learn what happened; that read fails too, on
    // each of its tries
    for _ in 0..crate::controller::attempt::SETTLE_TRIES {
        api.drops_connection().await;
    }
    assert_eq!(attempt.await.unwrap(), Attempt::Unsettled);
    assert_eq!(
        shared.lock().snapshot.usage().shoots_on("seed-1"),
        1,
        "may have been bound"
    );

    // the next attempt asks first: it was bound after all, and that is the success
    let attempt = spawn_attempt(&shared);
    api.returns_shoot("6", Some("seed-1")).await;
    api.accepts_success_event().await;
    assert_eq!(attempt.await.unwrap(), Attempt::Skipped);
    api.is_quiet().await;
    assert_eq!(shared.lock().snapshot.usage().shoots_on("seed-1"), 1);
    assert!(shared.lock().assumption("garden-a/s1").is_none());
}

#[tokio::test]
async fn an_unschedulable_shoot_gets_the_failure_event_and_last_operation() {
    let (client, mut api) = mock_api();
    let shared = controller(client);
    shared.lock().apply_seed(
        &SeedBuilder::new("seed-1")
            .taint("seed.gardener.cloud/protected", None)
            .build(),
    );
    let attempt = spawn_attempt(&shared);
    let event = api.next().await;
    assert_eq!(event.body["reason"], "SchedulingFailed");
    assert_eq!(event.body["type"], "Warning");
    let note = event.body["note"].as_str().unwrap().to_string();
    assert!(
        note.starts_with("Failed to schedule Shoot: 0/1 seeds are available:"),
        "{note}"
    );
    event.echo();
    let status = api.next().await;
    assert_eq!(status.method, "PATCH");
    assert_eq!(status.path, format!("{SHOOT_PATH}/status"));
    assert_eq!(status.content_type, "application/merge-patch+json");
    let op = &status.body["status"]["lastOperation"];
    assert_eq!(
        (op["type"].as_str(), op["state"].as_str()),
        (Some("Create"), Some("Pending"))
    );
    assert!(
        op["description"]
            .as_str()
            .unwrap()
            .starts_with("Failed to schedule Shoot: 0/1 seeds")
    );
    assert!(op["lastUpdateTime"].is_string());
    assert_eq!(
        status.body["status"].as_object().unwrap().len(),
        1,
        "nothing else is touched"
    );
    status.reply(server_shoot("6", None));
    assert_eq!(attempt.await.unwrap(), Attempt::Unschedulable);
    assert_eq!(shared.queue().failures("garden-a/s1"), 1);
}

/// A reporter queueing at most `capacity` reports, with its own counters.
fn test_reporter(client: Client, capacity: usize) -> Reporter {
    Reporter::new(
        client,
        "me".into(),
        REQUEST_TIMEOUT,
        capacity,
        Default::default(),
        Default::default(),
    )
}

#[tokio::test]
async fn forbidden_events_k8s_io_falls_back_to_core_v1_events() {
    let (client, mut api) = mock_api();
    let reporter = test_reporter(client.client(), 10);
    let err = crate::schedule::FitError::no_fit(0, vec![]);
    let mut shoot = observed_shoot();
    shoot.status = Some(crate::api::ShootStatus {
        last_operation: Some(crate::api::LastOperation {
            type_: "Create".into(),
            state: "Pending".into(),
            description: failure_description(&err),
            last_update_time: None,
        }),
        ..Default::default()
    });
    reporter.failed(&shoot, &err);
    let first = api.next().await;
    assert_eq!(
        first.path,
        "/apis/events.k8s.io/v1/namespaces/garden-a/events"
    );
    first.fail(403, "Forbidden");
    let legacy = api.next().await;
    assert_eq!(legacy.path, "/api/v1/namespaces/garden-a/events");
    assert_eq!(legacy.body["reason"], "SchedulingFailed");
    assert_eq!(legacy.body["involvedObject"]["name"], "s1");
    assert_eq!(legacy.body["source"]["component"], "shoot-scheduler");
    assert_eq!(legacy.body["action"], "Reconcile");
    legacy.echo();
    assert_eq!(reporter.flush(REQUEST_TIMEOUT).await, 0);
    // lastOperation already says so: no status write. The repeat bumps the count.
    reporter.failed(&shoot, &err);
    let again = api.next().await;
    assert_eq!(again.method, "PATCH");
    assert!(
        again
            .path
            .starts_with("/api/v1/namespaces/garden-a/events/s1."),
        "{}",
        again.path
    );
    assert_eq!(again.body["count"], 2);
    again.reply(json!({}));
    assert_eq!(reporter.flush(REQUEST_TIMEOUT).await, 0);
    api.is_quiet().await;
}

#[tokio::test]
async fn projects_that_may_not_be_listed_do_not_block_readiness() {
    let (client, mut api) = mock_api();
    let shared = controller(client);
    let feed = tokio::spawn(watch::run_project_feed_for_tests(shared.clone()));
    let list = api.next().await;
    assert_eq!(list.path, "/apis/core.gardener.cloud/v1beta1/projects");
    list.fail(403, "Forbidden");
    let retry = api.next().await;
    assert!(shared.is_synced(WatchedKind::Project), "synced as empty");
    drop(retry);
    feed.abort();
}

#[tokio::test]
async fn a_failing_list_is_retried_until_the_cache_syncs() {
    let (client, mut api) = mock_api();
    let shared = controller(client);
    let feed = tokio::spawn(watch::run_seed_feed_for_tests(shared.clone()));
    let list = api.next().await;
    assert_eq!(list.path, "/apis/core.gardener.cloud/v1beta1/seeds");
    list.fail(500, "InternalError");
    assert!(!shared.is_synced(WatchedKind::Seed));
    let list = api.next().await;
    let seed = serde_json::to_value(SeedBuilder::new("seed-2").build()).unwrap();
    list.reply(json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "SeedList",
        "metadata": {"resourceVersion": "10"}, "items": [seed]}));
    let watch = api.next().await;
    assert!(watch.query.contains("watch=true"), "{}", watch.query);
    // the watch breaks with an error event; the feed re-watches
    watch.respond.send_response(
        Response::builder()
            .status(200)
            .body(Body::from(
                br#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"injected","reason":"InternalError","code":500}}
"#
                .to_vec(),
            ))
            .unwrap(),
    );
    let again = api.next().await;
    assert!(shared.is_synced(WatchedKind::Seed));
    assert!(shared.lock().snapshot.seed("seed-2").is_some());
    drop(again);
    feed.abort();
}

mod answers;
mod budget;
mod events;
mod faults;
mod feeds;
mod production_stack;
mod scenario;
mod shutdown;
mod storm;
mod streaming;

// ---- binds from the cache, events off the bind path

/// `server_shoot` at version 5 with fields the scheduler does not model, applied as the watch
/// delivers it (typed, with the object as sent).
fn apply_watched_shoot(shared: &Shared) -> Value {
    let mut raw = server_shoot("5", None);
    raw["metadata"]["labels"] = json!({"team": "a"});
    raw["spec"]["futureField"] = json!({"kept": [1, 2, 3]});
    raw["spec"]["extensions"] = json!([{"type": "shoot-dns-service", "providerConfig": {"x": 1}}]);
    let typed: Shoot = serde_json::from_value(raw.clone()).unwrap();
    let change = shared.lock().apply_raw_shoot(&typed, &raw);
    assert!(change.enqueue);
    raw
}

#[tokio::test]
async fn a_bind_from_the_cache_is_one_request_carrying_every_field_as_sent() {
    let (client, mut api) = mock_api();
    let shared = controller(client);
    let raw = apply_watched_shoot(&shared);
    let attempt = spawn_attempt(&shared);
    let put = api.next().await;
    assert_eq!(
        (put.method.as_str(), put.path.as_str()),
        ("PUT", format!("{SHOOT_PATH}/binding").as_str()),
        "no read before the binding"
    );
    let mut want = raw.clone();
    want["spec"]["seedName"] = json!("seed-1");
    // the decision record (on by default) rides along in the same request
    let mut body = put.body.clone();
    let record = body["metadata"]["annotations"]
        .as_object_mut()
        .and_then(|a| a.remove(crate::api::ANNOTATION_DECISION))
        .expect("the decision record in the binding");
    let record: Value = serde_json::from_str(record.as_str().unwrap()).unwrap();
    assert_eq!(record["seed"], "seed-1");
    if body["metadata"]["annotations"]
        .as_object()
        .is_some_and(|a| a.is_empty())
    {
        body["metadata"]
            .as_object_mut()
            .unwrap()
            .remove("annotations");
    }
    assert_eq!(
        body, want,
        "the object as sent, with spec.seedName and the observed resourceVersion"
    );
    put.reply(server_shoot("6", Some("seed-1")));
    assert_eq!(attempt.await.unwrap(), Attempt::Scheduled("seed-1".into()));
    api.accepts_success_event().await;
    assert_eq!(shared.reporter.flush(REQUEST_TIMEOUT).await, 0);
    api.is_quiet().await;
    // bound: only the compact form stays
    let bound: Shoot = serde_json::from_value(server_shoot("6", Some("seed-1"))).unwrap();
    shared
        .lock()
        .apply_raw_shoot(&bound, &server_shoot("6", Some("seed-1")));
    assert!(shared.lock().pending_raw("garden-a/s1").is_none());
    assert_eq!(shared.lock().raw_count(), 0);
}

#[tokio::test]
async fn a_conflict_reads_the_shoot_again_and_binds_from_what_the_read_returned() {
    let (client, mut api) = mock_api();
    let shared = controller(client);
    apply_watched_shoot(&shared);
    let attempt = spawn_attempt(&shared);
    let put = api.next().await;
    assert!(put.path.ends_with("/binding"));
    put.fail(409, "Conflict");
    let read = api.reads_shoot().await;
    let mut newer = server_shoot("7", None);
    newer["spec"]["addedMeanwhile"] = json!("by someone else");
    read.reply(newer.clone());
    assert_eq!(attempt.await.unwrap(), Attempt::Conflict);
    // decided again: the binding carries the version just read, its new field included
    let attempt = spawn_attempt(&shared);
    let put = api.next().await;
    assert!(put.path.ends_with("/binding"), "{}", put.path);
    assert_eq!(put.body["metadata"]["resourceVersion"], "7");
    assert_eq!(put.body["spec"]["addedMeanwhile"], "by someone else");
    put.reply(server_shoot("8", Some("seed-1")));
    assert_eq!(attempt.await.unwrap(), Attempt::Scheduled("seed-1".into()));
}

#[tokio::test]
async fn a_bind_never_waits_for_its_event() {
    let (client, mut api) = mock_api();
    let shared = controller(client);
    apply_watched_shoot(&shared);
    let attempt = spawn_attempt(&shared);
    let put = api.next().await;
    put.reply(server_shoot("6", Some("seed-1")));
    let event = api.next().await;
    assert!(event.path.contains("/events"));
    // the event is not answered, yet the attempt is done and the worker free
    let done = tokio::time::timeout(Duration::from_secs(5), attempt).await;
    assert_eq!(
        done.expect("the attempt waited for its event").unwrap(),
        Attempt::Scheduled("seed-1".into())
    );
    assert_eq!(shared.reporter.outstanding(), 1);
    event.echo();
    assert_eq!(shared.reporter.flush(REQUEST_TIMEOUT).await, 0);
}

#[tokio::test]
async fn a_full_report_queue_drops_reports_and_counts_them() {
    let (client, mut api) = mock_api();
    let m = Metrics::new();
    let reporter = Reporter::new(
        client.client(),
        "me".into(),
        REQUEST_TIMEOUT,
        2,
        m.events_dropped.clone(),
        m.events_queued.clone(),
    );
    let shoot = observed_shoot();
    // ten reports at once, before the senders ran: two fit the queue
    for i in 0..10 {
        reporter.deferred(&shoot, &format!("reason {i}"));
    }
    assert_eq!(m.events_dropped.get(), 8);
    assert_eq!(m.events_queued.get(), 2);
    assert!(
        m.encode()
            .lines()
            .any(|l| l == "gardener_scheduler_events_dropped_total 8")
    );
    for _ in 0..2 {
        let event = api.next().await;
        assert_eq!(event.method, "POST");
        event.echo();
    }
    assert_eq!(reporter.flush(REQUEST_TIMEOUT).await, 0);
    assert_eq!(m.events_queued.get(), 0);
    api.is_quiet().await;
}

//! Faults around binding and leadership: server errors, no answer, missing permissions, the
//! lease lost while a bind is in flight, and the event volume of a shoot that keeps failing.
//! Requests are answered by hand through tower-test's mock service.

use std::sync::Arc;
use std::time::Duration;

use crate::controller::tests::*;
use serde_json::{Value, json};
use tokio::time::Instant;

/// Waits for the next key the queue hands out; returns it with the delay, in whole seconds,
/// measured from `since`.
async fn next_due(shared: &Shared, since: Instant) -> (String, u64) {
    let key = shared.queue().next().await.expect("queue is running");
    let waited = since.elapsed().as_millis();
    shared.queue().done(&key);
    (key.to_string(), ((waited + 500) / 1000) as u64)
}

/// Log lines written while the guard lives (tests run on one thread, spawned tasks included).
#[derive(Clone, Default)]
pub(super) struct Logs(Arc<std::sync::Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for Logs {
    type Writer = Logs;
    fn make_writer(&'a self) -> Logs {
        self.clone()
    }
}

impl Logs {
    pub(super) fn capture() -> (Logs, tracing::subscriber::DefaultGuard) {
        let logs = Logs::default();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(logs.clone())
            .with_ansi(false)
            .with_max_level(tracing::Level::DEBUG)
            .finish();
        (logs, tracing::subscriber::set_default(subscriber))
    }

    pub(super) fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().unwrap()).into_owned()
    }
}

#[tokio::test(start_paused = true)]
async fn server_errors_on_bind_are_retried_with_growing_delays_and_reported_once_per_attempt() {
    for (code, reason) in [(500, "InternalError"), (503, "ServiceUnavailable")] {
        let (client, mut api) = mock_api();
        let shared = controller_from(
            client,
            "leaderElection: {leaderElect: false}\nschedulers: {shoot: {streamingLists: false, retrySyncPeriod: 7s, backoff: {initial: 1s, max: 30s}}}\n",
        );
        let (mut delays, mut reports) = (Vec::new(), Vec::new());
        let mut stored_status = Value::Null;
        for _ in 0..4 {
            let attempt = spawn_attempt(&shared);
            // the binding carries the object the last read returned, or a fresh read
            let mut put = api.next().await;
            if put.method == "GET" {
                put.reply(server_shoot("5", None));
                put = api.next().await;
            }
            assert_eq!(put.path, format!("{SHOOT_PATH}/binding"));
            put.fail(code, reason);
            // a 5xx does not prove the bind was refused: the shoot is read at once, and shows
            // it was not applied
            let read = api.reads_shoot().await;
            // the shoot as the server has it: pending, with the status written so far
            let mut stored = server_shoot("5", None);
            stored["status"] = stored_status.clone();
            read.reply(stored);
            // then reported as upstream reports a failed bind; the status write comes back
            // through the watch, as it would, and must not wake the shoot before its backoff
            // step
            let (result, events, status) = answer_reports(&shared, attempt, &mut api).await;
            assert_eq!(result, Attempt::Error, "{code}");
            stored_status =
                serde_json::to_value(&shared.lock().pending("garden-a/s1").unwrap().status)
                    .unwrap();
            reports.push((events, status));
            let failed_at = Instant::now();
            api.is_quiet().await;
            assert_eq!(shared.lock().snapshot.usage().shoots_on("seed-1"), 0);
            assert!(shared.lock().pending("garden-a/s1").is_some(), "{code}");
            let (key, waited) = next_due(&shared, failed_at).await;
            assert_eq!(key, "garden-a/s1");
            delays.push(waited);
        }
        assert_eq!(
            delays,
            [7, 14, 28, 30],
            "{code}: retrySyncPeriod, doubling, capped at backoff.max"
        );
        assert_eq!(attempts(&shared, "error"), 4, "{code}");
        let events: Vec<&[String]> = reports.iter().map(|(e, _)| e.as_slice()).collect();
        assert_eq!(
            events,
            [
                &["POST SchedulingFailed".to_string()][..],
                &["PATCH series".to_string()][..],
                &["PATCH series".to_string()][..],
                &["PATCH series".to_string()][..],
            ],
            "{code}: one event per attempt, repeats update its series"
        );
        let status: Vec<usize> = reports.iter().map(|(_, s)| *s).collect();
        assert_eq!(
            status,
            [1, 0, 0, 0],
            "{code}: lastOperation is written once while it says the same"
        );
    }
}

/// Takes the binding and the read that checks it, both left without an answer in `hanging`.
async fn leaves_bind_unanswered(
    api: &mut ApiServer,
    hanging: &mut Vec<tower_test::mock::SendResponse<Response<Body>>>,
) {
    let put = api.binds_shoot().await;
    hanging.push(put.respond);
    let read = api.reads_shoot().await;
    hanging.push(read.respond);
}

#[tokio::test(start_paused = true)]
async fn binds_without_an_answer_are_checked_then_retried_with_growing_delays_and_bound_once() {
    let (client, mut api) = mock_api();
    let shared = controller_from(
        client,
        "leaderElection: {leaderElect: false}\nschedulers: {shoot: {streamingLists: false, retrySyncPeriod: 7s, backoff: {initial: 1s, max: 60s}}}\n",
    );
    let mut hanging = Vec::new();
    let mut binds = 0;

    // 1. the binding gets no answer, nor does the read that follows at once: outcome unknown,
    // the slot stays counted
    let attempt = spawn_attempt(&shared);
    api.returns_shoot("5", None).await;
    leaves_bind_unanswered(&mut api, &mut hanging).await;
    binds += 1;
    // not an error yet: what a read or the watch shows next settles it
    assert_eq!(attempt.await.unwrap(), Attempt::Unsettled);
    let t = Instant::now();
    assert_eq!(shared.lock().snapshot.usage().shoots_on("seed-1"), 1);
    api.is_quiet().await;
    assert_eq!(next_due(&shared, t).await.1, 7);

    // 2. a read says it did not happen; decided again and bound from what the read returned
    // (no second read); the binding hangs again
    let attempt = spawn_attempt(&shared);
    let read = api.reads_shoot().await;
    read.reply(server_shoot("5", None));
    leaves_bind_unanswered(&mut api, &mut hanging).await;
    binds += 1;
    assert_eq!(attempt.await.unwrap(), Attempt::Unsettled);
    let t = Instant::now();
    api.is_quiet().await;
    assert_eq!(next_due(&shared, t).await.1, 14);

    // 3. the read gets no answer either: asked again later, nothing written
    let attempt = spawn_attempt(&shared);
    let read = api.next().await;
    assert_eq!(read.method, "GET");
    hanging.push(read.respond);
    assert_eq!(attempt.await.unwrap(), Attempt::Error);
    let t = Instant::now();
    api.is_quiet().await;
    assert_eq!(next_due(&shared, t).await.1, 28);

    // 4. the server answers again: the read, then the binding from it: bound, one success event
    let attempt = spawn_attempt(&shared);
    api.returns_shoot("5", None).await;
    let put = api.binds_shoot().await;
    binds += 1;
    put.reply(server_shoot("6", Some("seed-1")));
    api.accepts_success_event().await;
    assert_eq!(attempt.await.unwrap(), Attempt::Scheduled("seed-1".into()));
    api.is_quiet().await;
    assert_eq!(binds, 3, "two unanswered binds and the one that succeeded");
    assert_eq!(shared.lock().snapshot.usage().shoots_on("seed-1"), 1);
    assert!(shared.queue().is_empty(), "nothing left to retry");
    drop(hanging);
}

/// Answers the reports an attempt queues after its bind was refused until the attempt ended and
/// its reports were sent:
/// events (`POST <reason>` or `PATCH series`) and `status.lastOperation` writes, each brought
/// back into the controller's state as the watch would bring it.
async fn answer_reports(
    shared: &Arc<Shared>,
    mut attempt: tokio::task::JoinHandle<Attempt>,
    api: &mut ApiServer,
) -> (Attempt, Vec<String>, usize) {
    let (mut events, mut status) = (Vec::new(), 0);
    let mut result = None;
    let result = loop {
        tokio::select! {
            r = &mut attempt, if result.is_none() => result = Some(r.unwrap()),
            // the reports are sent after the attempt, off its path
            _ = shared.reporter.flush(Duration::from_secs(3600)), if result.is_some() => break result.unwrap(),
            call = api.next() => {
                if call.path.contains("/events") {
                    let what = call.body["reason"].as_str().unwrap_or("series");
                    events.push(format!("{} {what}", call.method));
                    let body = if call.method == "POST" { call.body.clone() } else { json!({}) };
                    call.reply(body);
                } else {
                    status += 1;
                    call.patches_status(shared);
                }
            }
        }
    };
    (result, events, status)
}

/// What a real API server answers when RBAC denies the binding.
fn forbidden(verb: &str, resource: &str) -> Response<Body> {
    let message = format!(
        "shoots.core.gardener.cloud \"s1\" is forbidden: User \"system:serviceaccount:garden:gardener-scheduler\" cannot {verb} resource \"{resource}\" in API group \"core.gardener.cloud\" in the namespace \"garden-a\""
    );
    let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                        "message": message, "reason": "Forbidden", "code": 403});
    json_response(403, &status)
}

/// What gardener-apiserver answers when its admission refuses the binding (ShootValidator: the
/// seed gives the shoot no networks): a 403 that is about the shoot, not the scheduler's rights.
fn refused_by_admission() -> Response<Body> {
    let message = "shoots.core.gardener.cloud \"s1\" is forbidden: [spec.networking.pods: Required value: pods is required, spec.networking.services: Required value: services is required]";
    let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                        "message": message, "reason": "Forbidden", "code": 403});
    json_response(403, &status)
}

#[tokio::test]
async fn a_bind_forbidden_by_admission_is_the_shoots_refusal_not_a_missing_permission() {
    let (logs, _guard) = Logs::capture();
    let (client, mut api) = mock_api();
    let shared = controller_from(
        client,
        "leaderElection: {leaderElect: false}\nschedulers: {shoot: {streamingLists: false, retrySyncPeriod: 7s}}\n",
    );
    let attempt = spawn_attempt(&shared);
    api.returns_shoot("5", None).await;
    let write = api.next().await;
    assert_eq!(write.method, "PUT");
    write.respond.send_response(refused_by_admission());
    let (event, _) = api.accepts_failure_report().await;
    assert_eq!(event["reason"], "SchedulingFailed");
    let note = event["note"].as_str().unwrap();
    assert!(
        note.contains("spec.networking.pods: Required value"),
        "the server's reason: {event}"
    );
    assert!(!note.contains("needs permission"), "{event}");
    assert_eq!(attempt.await.unwrap(), Attempt::Error);
    api.is_quiet().await;
    assert!(shared.lock().pending("garden-a/s1").is_some());
    assert_eq!(shared.lock().snapshot.usage().shoots_on("seed-1"), 0);
    assert_eq!(shared.queue().len(), 1, "retried later");
    assert!(!logs.text().contains("needs permission"), "{}", logs.text());
}

#[tokio::test]
async fn a_forbidden_bind_names_the_missing_permission_and_the_shoot_stays_pending() {
    let cases = [
        (
            "Binding",
            "update shoots/binding",
            "update",
            "shoots/binding",
        ),
        ("Patch", "patch shoots", "patch", "shoots"),
    ];
    for (mode, permission, verb, resource) in cases {
        let (logs, _guard) = Logs::capture();
        let (client, mut api) = mock_api();
        let shared = controller_from(
            client,
            &format!(
                "leaderElection: {{leaderElect: false}}\nschedulers: {{shoot: {{streamingLists: false, retrySyncPeriod: 7s, bindingMode: {mode}}}}}\n"
            ),
        );
        let attempt = spawn_attempt(&shared);
        if mode == "Binding" {
            api.returns_shoot("5", None).await;
        }
        let write = api.next().await;
        assert_eq!(
            write.method,
            if mode == "Binding" { "PUT" } else { "PATCH" }
        );
        write.respond.send_response(forbidden(verb, resource));
        let (event, _) = api.accepts_failure_report().await;
        assert_eq!(event["reason"], "SchedulingFailed", "{mode}");
        assert!(
            event["note"]
                .as_str()
                .unwrap()
                .contains(&format!("the scheduler needs permission to {permission}")),
            "{mode}: {event}"
        );
        assert_eq!(attempt.await.unwrap(), Attempt::Error, "{mode}");
        api.is_quiet().await;
        assert!(shared.lock().pending("garden-a/s1").is_some(), "{mode}");
        assert_eq!(shared.lock().snapshot.usage().shoots_on("seed-1"), 0);
        assert_eq!(shared.queue().len(), 1, "{mode}: retried later");
        let text = logs.text();
        // one refusal may be an API server that has just started: a warning; the ERROR
        // follows once it persists (`refusals::tests`)
        let line = text
            .lines()
            .find(|l| l.contains("bind refused"))
            .unwrap_or_else(|| panic!("{mode}: no log line for the failed bind:\n{text}"));
        assert!(line.contains("WARN"), "{mode}: logged as a warning: {line}");
        assert!(
            line.contains(&format!(
                "the scheduler needs permission to {permission} in API group core.gardener.cloud"
            )),
            "{mode}: names the permission: {line}"
        );
        assert!(
            line.contains(&format!("cannot {verb} resource")),
            "{mode}: keeps the server's words: {line}"
        );
    }
}

#[tokio::test(start_paused = true)]
async fn an_unschedulable_shoot_publishes_at_most_one_event_per_backoff_step() {
    let (client, mut api) = mock_api();
    let shared = controller_from(
        client,
        "leaderElection: {leaderElect: false}\nschedulers: {shoot: {streamingLists: false, backoff: {initial: 1s, max: 1000s}}}\n",
    );
    shared.lock().apply_seed(
        &SeedBuilder::new("seed-1")
            .taint("seed.gardener.cloud/protected", None)
            .build(),
    );
    let mut per_step = Vec::new();
    let mut delays = Vec::new();
    for _ in 0..5 {
        let attempt = spawn_attempt(&shared);
        let (result, events, status) = answer_reports(&shared, attempt, &mut api).await;
        assert_eq!(result, Attempt::Unschedulable);
        let t = Instant::now();
        api.is_quiet().await;
        per_step.push((events, status));
        delays.push(next_due(&shared, t).await.1);
    }
    let events: Vec<usize> = per_step.iter().map(|(e, _)| e.len()).collect();
    assert_eq!(events, [1, 1, 1, 1, 1], "{per_step:?}");
    assert!(per_step[0].0[0].starts_with("POST "), "{per_step:?}");
    assert!(
        per_step[1..]
            .iter()
            .all(|(e, _)| e[0].starts_with("PATCH ")),
        "repeats update the event's series instead of adding events: {per_step:?}"
    );
    let status: Vec<usize> = per_step.iter().map(|(_, s)| *s).collect();
    assert_eq!(
        status,
        [1, 0, 0, 0, 0],
        "lastOperation is written once while it says the same"
    );
    assert_eq!(delays, [1, 2, 4, 8, 16]);
}

// ---- leadership lost while a bind is in flight

const LEASE_PATH: &str =
    "/apis/coordination.k8s.io/v1/namespaces/garden/leases/gardener-scheduler-leader-election";

fn lease(holder: &str, rv: &str) -> Value {
    json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
           "metadata": {"name": "gardener-scheduler-leader-election", "namespace": "garden", "resourceVersion": rv},
           "spec": {"holderIdentity": holder, "leaseDurationSeconds": 4,
                    "renewTime": "2026-12-01T00:00:00.000000Z", "acquireTime": "2026-12-01T00:00:00.000000Z",
                    "leaseTransitions": 1}})
}

const ELECTED: &str = "leaderElection: {leaderElect: true, leaseDuration: 4s, renewDeadline: 3s, retryPeriod: 500ms}\nschedulers: {shoot: {streamingLists: false, retrySyncPeriod: 7s}}\n";

/// Starts a controller whose elector runs against the mock and wins the lease.
async fn elected(
    api: &mut ApiServer,
    client: Connection,
) -> (Arc<Shared>, tokio::sync::watch::Sender<bool>) {
    let c = Controller::new(load_str(ELECTED).unwrap(), client).unwrap();
    let shared = Arc::clone(&c.shared);
    seed_landscape(&shared);
    let elector = c
        .elector
        .expect("leaderElect: true")
        .build(&c.cfg.leader_election);
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(elector.run(stop_rx, || None, |_| {}));
    let get = api.next().await;
    assert_eq!(
        (get.method.as_str(), get.path.as_str()),
        ("GET", LEASE_PATH)
    );
    get.fail(404, "NotFound");
    let create = api.next().await;
    assert_eq!(create.method, "POST");
    let mut created = create.body.clone();
    created["metadata"]["resourceVersion"] = json!("1");
    create.reply(created);
    let start = Instant::now();
    while !shared.leadership.is_leader() {
        assert!(start.elapsed() < Duration::from_secs(5), "never leader");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    (shared, stop_tx)
}

/// Answers lease reads with `holder` (or a server error) for `span`, failing on any other request.
async fn only_lease_reads_for(api: &mut ApiServer, span: Duration, holder: Option<&str>) -> usize {
    let until = Instant::now() + span;
    let mut reads = 0;
    while let Ok(Some((req, respond))) = tokio::time::timeout_at(until, api.next_request()).await {
        assert_eq!(
            (req.method().as_str(), req.uri().path()),
            ("GET", LEASE_PATH),
            "only lease reads once leadership is lost"
        );
        reads += 1;
        respond.send_response(match holder {
            Some(hd) => ok(lease(hd, "9")),
            None => failure(500, "InternalError"),
        });
    }
    reads
}

#[tokio::test(start_paused = true)]
async fn no_binding_is_sent_after_the_lease_is_taken_over_mid_bind() {
    let (client, mut api) = mock_api();
    let (shared, stop) = elected(&mut api, client).await;
    let attempt = spawn_attempt(&shared);
    // the bind reads the shoot; the answer is held back
    let read = api.reads_shoot().await;
    // meanwhile the next renewal finds another holder
    let renew = api.next().await;
    assert_eq!(renew.path, LEASE_PATH);
    renew.reply(lease("other", "7"));
    while shared.leadership.is_leader() {
        tokio::task::yield_now().await;
    }
    read.reply(server_shoot("5", None));
    assert_eq!(attempt.await.unwrap(), Attempt::NotLeader);
    let reads = only_lease_reads_for(&mut api, Duration::from_secs(3), Some("other")).await;
    assert!(reads >= 2, "the elector keeps watching the lease");
    assert!(shared.lock().assumption("garden-a/s1").is_none());
    assert_eq!(shared.lock().snapshot.usage().shoots_on("seed-1"), 0);
    assert!(shared.lock().pending("garden-a/s1").is_some());
    assert_eq!(shared.queue().len(), 1, "waiting for whoever leads next");
    let _ = stop.send(true);
}

#[tokio::test(start_paused = true)]
async fn no_binding_is_sent_once_renewals_fail_past_the_renew_deadline() {
    let (client, mut api) = mock_api();
    let (shared, stop) = elected(&mut api, client).await;
    let attempt = spawn_attempt(&shared);
    let read = api.reads_shoot().await;
    let elected_at = Instant::now();
    // renewals fail for longer than renewDeadline (3 s)
    only_lease_reads_for(&mut api, Duration::from_millis(3500), None).await;
    assert!(elected_at.elapsed() > Duration::from_secs(3));
    assert!(!shared.leadership.is_leader(), "deadline passed");
    read.reply(server_shoot("5", None));
    assert_eq!(attempt.await.unwrap(), Attempt::NotLeader);
    only_lease_reads_for(&mut api, Duration::from_secs(2), None).await;
    assert_eq!(shared.lock().snapshot.usage().shoots_on("seed-1"), 0);
    assert!(shared.lock().pending("garden-a/s1").is_some());
    let _ = stop.send(true);
}

/// A controller without leader election or streaming lists, its seed feed running.
fn seed_feed(client: Connection) -> (Arc<Shared>, tokio::task::JoinHandle<()>) {
    let shared = controller_from(
        client,
        "leaderElection: {leaderElect: false}\nschedulers: {shoot: {streamingLists: false}}\n",
    );
    let feed = tokio::spawn(watch::run_seed_feed_for_tests(shared.clone()));
    (shared, feed)
}

#[tokio::test]
async fn a_forbidden_list_of_a_needed_kind_is_logged_with_the_permission_and_blocks_readiness() {
    let (logs, _guard) = Logs::capture();
    let (client, mut api) = mock_api();
    let (shared, feed) = seed_feed(client);
    for _ in 0..2 {
        let list = api.next().await;
        assert_eq!(list.path, "/apis/core.gardener.cloud/v1beta1/seeds");
        let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403,
            "message": "seeds.core.gardener.cloud is forbidden: User \"system:serviceaccount:garden:gardener-scheduler\" cannot list resource \"seeds\" in API group \"core.gardener.cloud\" at the cluster scope"});
        list.respond.send_response(json_response(403, &status));
    }
    assert!(!shared.is_synced(WatchedKind::Seed), "not treated as empty");
    assert!(shared.unsynced().contains(&WatchedKind::Seed.as_str()));
    let text = logs.text();
    // the permission to grant and the answer's message, not a dump of the whole Status
    assert!(
        text.lines().any(|l| l.contains("WARN")
            && l.contains("watch failed; retrying")
            && l.contains("forbidden: the scheduler needs permission to list and watch seeds.core.gardener.cloud (the chart's roles grant it); the API server said: seeds.core.gardener.cloud is forbidden")
            && l.contains("cannot list resource \"seeds\" in API group \"core.gardener.cloud\"")
            && !l.contains("Status {")),
        "{text}"
    );
    feed.abort();
}

#[tokio::test(start_paused = true)]
async fn an_unreachable_server_is_asked_ever_less_often_and_reported_once() {
    let (logs, _guard) = Logs::capture();
    let (client, mut api) = mock_api();
    let (_shared, feed) = seed_feed(client);
    let start = Instant::now();
    let mut lists = 0;
    // every list fails without an answer for two minutes
    while let Ok(Some((request, respond))) =
        tokio::time::timeout_at(start + Duration::from_secs(120), api.next_request()).await
    {
        assert_eq!(
            request.uri().path(),
            "/apis/core.gardener.cloud/v1beta1/seeds"
        );
        respond.send_error(std::io::Error::other("connection reset"));
        lists += 1;
    }
    // 0.8 s doubling to 30 s, jittered: about 9 tries in two minutes, not one a second
    assert!((4..=15).contains(&lists), "{lists} lists in two minutes");
    let text = logs.text();
    let warned = text
        .lines()
        .filter(|l| l.contains("WARN") && l.contains("watch failed; retrying"))
        .count();
    assert_eq!(warned, 1, "one WARN for the same failure:\n{text}");
    assert!(
        text.contains("connection reset"),
        "the cause is named:\n{text}"
    );
    feed.abort();
}

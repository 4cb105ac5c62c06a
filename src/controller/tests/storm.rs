//! Binds that keep failing, for many shoots at once, over half an hour of paused test clock: the
//! requests sent stay within what each shoot's own retry schedule allows (first retry after
//! `retrySyncPeriod`, doubling up to `backoff.max`), whatever the failure, and the failures of
//! one shoot never make the others retry sooner.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::controller::tests::*;
use serde_json::{Value, json};
use tokio::time::Instant;

/// Shoots pending at once; all fit on the one seed.
const SHOOTS: usize = 12;
const WINDOW: Duration = Duration::from_secs(30 * 60);
const RETRY: Duration = Duration::from_secs(15);
const MAX: Duration = Duration::from_secs(240);
const CONFIG: &str = "leaderElection: {leaderElect: false}\nschedulers: {shoot: {streamingLists: false, concurrentSyncs: 4, retrySyncPeriod: 15s, backoff: {initial: 1s, max: 240s}}}\n";

#[derive(Clone, Copy, Debug, PartialEq)]
enum Failure {
    /// the answer to every binding PUT (404: the shoot exists, the subresource does not)
    Code(u16, &'static str),
    /// every binding PUT stays unanswered
    Timeout,
}

fn shoot_name(i: usize) -> String {
    format!("s{i:02}")
}

fn server_shoot_named(name: &str) -> Value {
    json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
        "metadata": {"name": name, "namespace": "garden-a", "uid": format!("u-{name}"), "resourceVersion": "5"},
        "spec": {"cloudProfileName": "aws", "region": "eu-west-1", "provider": {"type": "aws"},
                 "kubernetes": {"version": "1.33.2"}},
    })
}

/// A controller with `SHOOTS` pending shoots, one seed with room for all of them, every shoot
/// queued, and its workers running. Returns the workers to abort.
fn storm_controller(
    client: Connection,
    slots: &str,
) -> (Arc<Shared>, Vec<tokio::task::JoinHandle<()>>) {
    let c = Controller::new(load_str(CONFIG).unwrap(), client).unwrap();
    let shared = Arc::clone(c.shared());
    {
        let mut st = shared.lock();
        st.apply_seed(
            &SeedBuilder::new("seed-1")
                .allocatable("shoots", slots)
                .build(),
        );
        let mut cp = crate::api::CloudProfile::default();
        cp.metadata.name = Some("aws".into());
        st.apply_cloud_profile(&cp);
        // as the watch delivers them: typed, with the object as sent
        for i in 0..SHOOTS {
            let raw = server_shoot_named(&shoot_name(i));
            let typed: crate::api::Shoot = serde_json::from_value(raw.clone()).unwrap();
            st.apply_raw_shoot(&typed, &raw);
        }
    }
    for key in shared.lock().pending_keys() {
        shared.queue().add(&key);
    }
    let workers = (0..4)
        .map(|i| tokio::spawn(worker::worker(shared.clone(), i)))
        .collect();
    (shared, workers)
}

/// Attempt times of one shoot whose every attempt fails, from 0 within `window`, if each attempt
/// took no time: retried after `first`, then twice as long each time, capped at `max`.
/// `immediate_first`: the first retry follows at once (a conflict is decided again at once).
fn attempt_times(first: Duration, max: Duration, window: Duration, immediate_first: bool) -> usize {
    let policy = BackoffPolicy {
        initial: first,
        max,
    };
    policy.attempts_within(window) + usize::from(immediate_first)
}

/// The delay before retry `n` (from 0) of a bind: the queue's own policy.
fn retry_delay(n: usize) -> Duration {
    BackoffPolicy {
        initial: RETRY,
        max: MAX,
    }
    .delay(n as u32)
}

#[derive(Default)]
struct Seen {
    /// every request: (when, "METHOD path")
    all: Vec<(Duration, String)>,
    /// binding PUTs per shoot name, with their times
    binds: BTreeMap<String, Vec<Duration>>,
}

/// Answers the mock API server: shoot reads with the pending shoot, binding PUTs with
/// `failure`, anything else with an empty success, recording every request in `seen`. Stops
/// answering once more than `cap` requests came in (a hot loop would never let time pass).
async fn serve(
    mut api: ApiServer,
    failure: Failure,
    start: Instant,
    cap: usize,
    seen: Arc<std::sync::Mutex<Seen>>,
    shared: Arc<Shared>,
) {
    let mut hanging = Vec::new();
    // status.lastOperation as written, returned by later reads as the API server would
    let mut status: BTreeMap<String, Value> = BTreeMap::new();
    while let Some((req, respond)) = api.next_request().await {
        let at = start.elapsed();
        let method = req.method().to_string();
        let path = req.uri().path().to_string();
        let written = if path.ends_with("/status") {
            let bytes = req.into_body().collect_bytes().await.unwrap();
            serde_json::from_slice::<Value>(&bytes).ok()
        } else {
            None
        };
        let mut seen = seen.lock().unwrap();
        seen.all.push((at, format!("{method} {path}")));
        if seen.all.len() > cap {
            return;
        }
        let shoot = path
            .strip_prefix("/apis/core.gardener.cloud/v1beta1/namespaces/garden-a/shoots/")
            .map(|rest| rest.trim_end_matches("/binding").to_string());
        match (method.as_str(), shoot) {
            ("GET", Some(name)) => {
                let mut shoot = server_shoot_named(&name);
                if let Some(st) = status.get(&name) {
                    shoot["status"] = st.clone();
                }
                respond.send_response(ok(shoot))
            }
            ("PATCH", Some(name)) if path.ends_with("/status") => {
                let name = name.trim_end_matches("/status").to_string();
                let mut shoot = server_shoot_named(&name);
                if let Some(st) = written.and_then(|w| w.get("status").cloned()) {
                    status.insert(name.clone(), st.clone());
                    shoot["status"] = st;
                }
                // the watch brings the written status into the cache, as in a cluster: the
                // cached shoot with the new lastOperation
                let key = format!("garden-a/{name}");
                let cached = shared.lock().pending_raw(&key);
                if let Some(cached) = cached {
                    let mut watched: Value = serde_json::from_str(&cached).unwrap();
                    watched["status"]["lastOperation"] = shoot["status"]["lastOperation"].clone();
                    let typed: crate::api::Shoot = serde_json::from_value(watched.clone()).unwrap();
                    let change = shared.lock().apply_raw_shoot(&typed, &watched);
                    shared.queue_affected(&key, change);
                }
                respond.send_response(ok(shoot))
            }
            ("PUT", Some(name)) if path.ends_with("/binding") => {
                seen.binds.entry(name).or_default().push(at);
                match failure {
                    Failure::Code(code, reason) => {
                        respond.send_response(failure_with(code, reason))
                    }
                    Failure::Timeout => hanging.push(respond),
                }
            }
            _ => respond.send_response(ok(json!({}))),
        }
    }
}

fn failure_with(code: u16, reason: &str) -> Response<Body> {
    if code == 403 {
        let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "reason": "Forbidden", "code": 403,
            "message": "shoots.core.gardener.cloud is forbidden: User \"system:serviceaccount:garden:gardener-scheduler\" cannot update resource \"shoots/binding\" in API group \"core.gardener.cloud\" in the namespace \"garden-a\""});
        return json_response(403, &status);
    }
    failure(code, reason)
}

/// Runs the controller of [`storm_controller`] (`slots` on its seed) against a server answering
/// binds with `failure`, until [`WINDOW`] has passed or the server has seen `bound` requests,
/// then stops both. Returns the controller and what the server saw.
async fn run_storm(
    client: Connection,
    api: ApiServer,
    failure: Failure,
    start: Instant,
    bound: usize,
    slots: &str,
) -> (Arc<Shared>, Arc<std::sync::Mutex<Seen>>) {
    let seen = Arc::new(std::sync::Mutex::new(Seen::default()));
    let (shared, workers) = storm_controller(client, slots);
    let server = tokio::spawn(serve(
        api,
        failure,
        start,
        bound,
        seen.clone(),
        shared.clone(),
    ));
    tokio::select! {
        _ = tokio::time::sleep(WINDOW) => {}
        _ = async { while !server.is_finished() { tokio::time::sleep(Duration::from_millis(100)).await } } => {}
    }
    for w in &workers {
        w.abort();
    }
    server.abort();
    (shared, seen)
}

/// Runs `SHOOTS` shoots against `failure` for [`WINDOW`] and checks the load against the retry
/// schedule: `per_attempt` requests per attempt, `immediate_first` for conflicts.
async fn storm(failure: Failure, per_attempt: usize, immediate_first: bool) {
    let (logs, _guard) = crate::controller::tests::faults::Logs::capture();
    let (client, api) = mock_api();
    let start = Instant::now();
    let attempts = attempt_times(RETRY, MAX, WINDOW, immediate_first);
    // As upstream, a refused bind (anything but 409) is reported: one `SchedulingFailed` event
    // per attempt, and `status.lastOperation` once (it is written only when its text changes).
    // A bind without an answer may have happened and is not reported.
    let reported = !matches!(failure, Failure::Code(409, _) | Failure::Timeout);
    let per_shoot = attempts * (per_attempt + usize::from(reported)) + usize::from(reported);
    let bound = SHOOTS * per_shoot;
    let (shared, seen) = run_storm(client, api, failure, start, bound, "100").await;
    let elapsed = start.elapsed();
    let seen = seen.lock().unwrap();
    let total = seen.all.len();
    assert!(
        total <= bound,
        "{failure:?}: more than {bound} requests (the bound for {} shoots over {WINDOW:?}) within {elapsed:?}; the first ones: {:?}",
        SHOOTS,
        &seen.all[..total.min(12)]
    );
    // every shoot was retried (the failures did not stop scheduling) on its own schedule
    assert_eq!(
        seen.binds.len(),
        SHOOTS,
        "{failure:?}: every shoot was tried"
    );
    for (shoot, times) in &seen.binds {
        assert!(
            times.len() <= attempts,
            "{failure:?}: {shoot} sent {} binds, more than its {attempts} attempts: {times:?}",
            times.len()
        );
        assert!(
            times.len() >= 4,
            "{failure:?}: {shoot} keeps being retried: {times:?}"
        );
        let retries = times.windows(2).skip(usize::from(immediate_first));
        for (n, pair) in retries.enumerate() {
            let (gap, expected) = (pair[1] - pair[0], retry_delay(n));
            assert!(
                gap >= expected,
                "{failure:?}: {shoot}: retry {} after {gap:?}, before its delay of {expected:?}: {times:?}",
                n + 1
            );
        }
    }
    let binds: usize = seen.binds.values().map(Vec::len).sum();
    let events = seen
        .all
        .iter()
        .filter(|(_, r)| r.contains("/events"))
        .count();
    let status = seen
        .all
        .iter()
        .filter(|(_, r)| r.ends_with("/status"))
        .count();
    assert!(
        seen.all
            .iter()
            .all(|(_, r)| r.contains("/shoots/") || r.contains("/events")),
        "{failure:?}: no writes but binds, events and status: {:?}",
        seen.all
            .iter()
            .find(|(_, r)| !r.contains("/shoots/") && !r.contains("/events"))
    );
    if reported {
        // one event per refused bind at most (a bind still under way when the window closed
        // has not been reported yet), and the status once per shoot
        assert!(
            events <= binds && events + SHOOTS * 4 >= binds,
            "{failure:?}: {events} events for {binds} refused binds"
        );
        assert_eq!(status, SHOOTS, "{failure:?}: lastOperation once per shoot");
    } else {
        assert_eq!(
            (events, status),
            (0, 0),
            "{failure:?}: nothing is reported for a conflict or a bind without an answer"
        );
    }
    let code = match failure {
        Failure::Code(code, _) => code.to_string(),
        Failure::Timeout => "none".into(),
    };
    assert_eq!(
        bind_errors(&shared, &code),
        binds as u64,
        "{failure:?}: every refused bind is counted by its code"
    );
    let errors = scenario::attempts(&shared, "error");
    if failure == Failure::Code(409, "Conflict") {
        assert_eq!(errors, 0, "a conflict is not an error");
        assert_eq!(shared.metrics().conflicts.get(), binds as u64);
    } else {
        assert_eq!(errors, binds as u64, "{failure:?}");
    }
    // a refusal that is the same for every shoot is said once (and reminded of every 10
    // minutes), not once per request; the others are warnings
    let text = logs.text();
    let errors: Vec<&str> = text.lines().filter(|l| l.contains("ERROR")).collect();
    let forbidden = failure == Failure::Code(403, "Forbidden");
    if forbidden || failure == Failure::Code(404, "NotFound") {
        let most = 1 + (WINDOW.as_secs() / refusals::REMINDER_EVERY.as_secs()) as usize;
        assert!(
            !errors.is_empty() && errors.len() <= most,
            "{failure:?}: {} ERROR lines for {binds} refused binds, expected 1 to {most}:\n{}",
            errors.len(),
            errors.join("\n")
        );
        let want = if forbidden {
            "the scheduler needs permission to update shoots/binding"
        } else {
            "set schedulers.shoot.bindingMode: Patch"
        };
        assert!(errors[0].contains(want), "{failure:?}: {}", errors[0]);
    } else {
        assert!(errors.is_empty(), "{failure:?}: {}", errors.join("\n"));
    }
    assert_eq!(
        shared.metrics().binds_forbidden.get(),
        i64::from(forbidden),
        "{failure:?}: the forbidden gauge"
    );
    shared.queue().shut_down();
}

fn bind_errors(shared: &Shared, code: &str) -> u64 {
    metric(
        shared,
        &format!("gardener_scheduler_bind_errors_total{{code=\"{code}\"}}"),
    )
    .map_or(0, |v| v.parse().unwrap())
}

#[test]
fn the_attempt_schedule_doubles_from_the_retry_period_to_the_cap() {
    // 0, 15, 45, 105, 225, 465, 705, 945, 1185, 1425, 1665 s
    assert_eq!(attempt_times(RETRY, MAX, WINDOW, false), 11);
    assert_eq!(attempt_times(RETRY, MAX, WINDOW, true), 12);
}

// One test per kind of persistent refusal. `Binding` mode: an attempt sends the binding from the
// cached shoot (1 request); a 404 on the binding is checked with a read; a conflict re-reads the
// shoot; an unanswered binding is checked with a read before the next attempt. Refusals but 409
// and no answer add their report (see `storm`), sent by the reporter off the bind path.

#[tokio::test(start_paused = true)]
async fn forbidden_binds_of_many_shoots_stay_within_their_retry_schedules() {
    storm(Failure::Code(403, "Forbidden"), 1, false).await;
}

#[tokio::test(start_paused = true)]
async fn binds_answered_not_found_stay_within_their_retry_schedules() {
    storm(Failure::Code(404, "NotFound"), 2, false).await;
}

#[tokio::test(start_paused = true)]
async fn binds_that_always_conflict_stay_within_their_retry_schedules() {
    storm(Failure::Code(409, "Conflict"), 2, true).await;
}

#[tokio::test(start_paused = true)]
async fn binds_refused_by_admission_stay_within_their_retry_schedules() {
    storm(Failure::Code(422, "Invalid"), 1, false).await;
}

#[tokio::test(start_paused = true)]
async fn throttled_binds_stay_within_their_retry_schedules() {
    storm(Failure::Code(429, "TooManyRequests"), 1, false).await;
}

#[tokio::test(start_paused = true)]
async fn binds_failing_with_500_stay_within_their_retry_schedules() {
    // the binding, then a read: a 5xx does not prove it was refused
    storm(Failure::Code(500, "InternalError"), 2, false).await;
}

#[tokio::test(start_paused = true)]
async fn binds_failing_with_503_stay_within_their_retry_schedules() {
    storm(Failure::Code(503, "ServiceUnavailable"), 2, false).await;
}

#[tokio::test(start_paused = true)]
async fn unanswered_binds_stay_within_their_retry_schedules() {
    storm(Failure::Timeout, 2, false).await;
}

/// A shoot turned away because another's placement was assumed on the last slot is retried as
/// soon as that bind fails, once; the shoot whose bind failed waits out its own retry delay.
#[tokio::test(start_paused = true)]
async fn a_failed_bind_retries_the_shoot_it_turned_away_once_and_not_itself() {
    let (client, mut api) = mock_api();
    let c = Controller::new(
        load_str("leaderElection: {leaderElect: false}\nschedulers: {shoot: {streamingLists: false, retrySyncPeriod: 15s, backoff: {initial: 100s, max: 1000s}}}\n").unwrap(),
        client,
    )
    .unwrap();
    let shared = Arc::clone(c.shared());
    {
        let mut st = shared.lock();
        st.apply_seed(
            &SeedBuilder::new("seed-1")
                .allocatable("shoots", "1")
                .build(),
        );
        let mut cp = crate::api::CloudProfile::default();
        cp.metadata.name = Some("aws".into());
        st.apply_cloud_profile(&cp);
        for name in ["a", "b"] {
            let mut s = ShootBuilder::new("garden-a", name).build();
            s.metadata.resource_version = Some("5".into());
            st.apply_shoot(&s);
        }
    }
    // a takes the last slot; its bind is in flight
    let a = tokio::spawn({
        let shared = shared.clone();
        async move { schedule_one(&shared, "garden-a/a").await }
    });
    let read_a = api.next().await;
    assert_eq!(
        read_a.path,
        "/apis/core.gardener.cloud/v1beta1/namespaces/garden-a/shoots/a"
    );
    // meanwhile b does not fit: event and status, then its 100 s backoff
    let b = tokio::spawn({
        let shared = shared.clone();
        async move { schedule_one(&shared, "garden-a/b").await }
    });
    for _ in 0..2 {
        let call = api.next().await;
        let body = call.body.clone();
        call.reply(body);
    }
    assert_eq!(b.await.unwrap(), Attempt::Unschedulable);
    // a's bind is refused: b may have the slot now, at once; a waits 15 s
    read_a.reply(server_shoot_named("a"));
    api.refuses(422, "Invalid").await;
    // the refusal is reported as upstream reports it: event and status
    for _ in 0..2 {
        let call = api.next().await;
        let body = call.body.clone();
        call.reply(body);
    }
    assert_eq!(a.await.unwrap(), Attempt::Error);
    let start = Instant::now();
    let first = shared.queue().next().await.unwrap();
    assert_eq!((&*first, start.elapsed()), ("garden-a/b", Duration::ZERO));
    shared.queue().done(&first);
    let second = shared.queue().next().await.unwrap();
    assert_eq!(
        (&*second, start.elapsed()),
        ("garden-a/a", RETRY),
        "the failed shoot keeps its own delay"
    );
    shared.queue().done(&second);
    // b is woken once per refusal: a second drop on seed-1 does not queue it again
    shared.queue().add_backoff("garden-a/b");
    {
        let mut st = shared.lock();
        let shoot = st.pending("garden-a/a").unwrap();
        st.assume(&shoot, "seed-1");
    }
    let c = shared.lock().forget_assumption("garden-a/a");
    assert!(c.requeue.is_empty() && !c.retry_waiting, "{c:?}");
    assert_eq!(shared.queue().len(), 1, "only b's own backoff is waiting");
}

/// Attempts within `window` of a shoot that never fits: after `backoff.initial` (1 s), doubling
/// up to `backoff.max` (240 s).
fn unschedulable_attempts(window: Duration) -> usize {
    attempt_times(Duration::from_secs(1), MAX, window, false)
}

/// Twelve shoots for one free slot, every bind forbidden: whoever holds the slot fails and hands
/// it on, yet no shoot binds sooner than its retry schedule allows, and the shoots turned away
/// retry no more often than their backoff plus one retry per failed bind that freed the slot.
#[tokio::test(start_paused = true)]
async fn forbidden_binds_competing_for_one_slot_stay_within_their_schedules() {
    let (logs, _guard) = crate::controller::tests::faults::Logs::capture();
    let (client, api) = mock_api();
    let start = Instant::now();
    let attempts = attempt_times(RETRY, MAX, WINDOW, false);
    // per shoot: its binds (1 request each, from the cached shoot, and the refusal's event), and
    // per decision that
    // finds the slot taken an event and at most one lastOperation write; such decisions come from
    // its backoff or from a failed bind of another shoot (one per bind at most)
    let binds = SHOOTS * attempts;
    let refusals = SHOOTS * unschedulable_attempts(WINDOW) + binds;
    let bound = binds * 2 + refusals * 2;
    let forbidden = Failure::Code(403, "Forbidden");
    let (shared, seen) = run_storm(client, api, forbidden, start, bound, "1").await;
    let seen = seen.lock().unwrap();
    let total = seen.all.len();
    assert!(
        total <= bound,
        "more than {bound} requests within {:?}; the first ones: {:?}",
        start.elapsed(),
        &seen.all[..total.min(12)]
    );
    let events = seen
        .all
        .iter()
        .filter(|(_, r)| r.contains("/events"))
        .count();
    assert!(
        events <= refusals + binds,
        "{events} events for at most {refusals} decisions that found the slot taken and {binds} refused binds"
    );
    assert_eq!(seen.binds.len(), SHOOTS, "every shoot got the slot");
    for (shoot, times) in &seen.binds {
        assert!(
            (4..=attempts).contains(&times.len()),
            "{shoot}: {} binds, expected 4 to {attempts}: {times:?}",
            times.len()
        );
        for (n, pair) in times.windows(2).enumerate() {
            let expected = retry_delay(n);
            assert!(
                pair[1] - pair[0] >= expected,
                "{shoot}: retried before its delay of {expected:?}: {times:?}"
            );
        }
    }
    let errors = logs.text().lines().filter(|l| l.contains("ERROR")).count();
    assert!(
        (1..=4).contains(&errors),
        "{errors} ERROR lines: one, and a reminder every 10 minutes at most"
    );
    assert_eq!(shared.metrics().binds_forbidden.get(), 1);
    shared.queue().shut_down();
}

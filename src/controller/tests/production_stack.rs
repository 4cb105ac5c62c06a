//! The faults that only the production client stack meets: a committed bind whose answer is
//! lost to a gateway, Retry-After on a throttled bind, writes waiting in the rate limiter while
//! the lease ends, lease renewals through a storm of 429s, a watch that goes silent. Every
//! client here is built by the production stack; only its innermost service is the mock.

use std::sync::Arc;
use std::time::Duration;

use crate::controller::client::stack::Layers;
use crate::controller::leader::Leadership;
use crate::controller::tests::*;
use serde_json::{Value, json};
use tokio::time::Instant;
use tower_test::mock::SendResponse;

/// A committed bind whose answer a gateway replaced by 502: the read shows it applied, so the
/// shoot is scheduled — a success event, no `SchedulingFailed`, no failed lastOperation, and
/// the slot stays counted.
#[tokio::test]
async fn a_committed_bind_answered_502_is_read_back_and_counts_as_scheduled() {
    let (client, mut api) = mock_api();
    let shared = controller(client);
    let attempt = spawn_attempt(&shared);
    api.returns_shoot("5", None).await;
    let put = api.binds_shoot().await;
    put.fail(502, "BadGateway");
    let read = api.reads_shoot().await;
    read.reply(server_shoot("6", Some("seed-1")));
    api.accepts_success_event().await;
    assert_eq!(attempt.await.unwrap(), Attempt::Scheduled("seed-1".into()));
    api.is_quiet().await;
    assert_eq!(shared.lock().snapshot.usage().shoots_on("seed-1"), 1);
    assert_eq!(attempts(&shared, "scheduled"), 1);
    assert_eq!(
        metric(
            &shared,
            "gardener_scheduler_bind_errors_total{code=\"502\"}"
        )
        .as_deref(),
        Some("1"),
        "the lost answer is still counted by its code"
    );
}

/// A gateway that answered a committed bind 502 and closed the connection: the read that
/// settles the outcome fails to connect, is sent again, and shows the bind applied.
#[tokio::test(start_paused = true)]
async fn the_read_after_a_502_is_sent_again_when_the_connection_breaks() {
    let (client, mut api) = mock_api();
    let shared = controller(client);
    let attempt = spawn_attempt(&shared);
    api.returns_shoot("5", None).await;
    api.next().await.fail(502, "BadGateway");
    let read = api.reads_shoot().await;
    read.drop_connection();
    let again = api.reads_shoot().await;
    again.reply(server_shoot("6", Some("seed-1")));
    api.accepts_success_event().await;
    assert_eq!(attempt.await.unwrap(), Attempt::Scheduled("seed-1".into()));
    assert_eq!(attempts(&shared, "scheduled"), 1);
    assert_eq!(attempts(&shared, "error"), 0);
    api.is_quiet().await;
}

/// A controller whose bind was answered 502 and whose reads of the shoot after it got no answer
/// on any try: the attempt ended unsettled.
async fn unsettled_bind() -> (Arc<Shared>, ApiServer) {
    let (client, mut api) = mock_api();
    let shared = controller(client);
    let attempt = spawn_attempt(&shared);
    api.returns_shoot("5", None).await;
    api.next().await.fail(502, "BadGateway");
    for _ in 0..crate::controller::attempt::SETTLE_TRIES {
        api.drops_connection().await;
    }
    assert_eq!(attempt.await.unwrap(), Attempt::Unsettled);
    (shared, api)
}

/// A bind answered 502 whose read fails on every try: not an error; what the next attempt's
/// read shows settles it (bound: the success event and a scheduled attempt).
#[tokio::test(start_paused = true)]
async fn an_unsettled_bind_is_settled_by_the_next_read_with_its_success_event() {
    let (shared, mut api) = unsettled_bind().await;
    assert_eq!(attempts(&shared, "error"), 0);
    assert_eq!(shared.lock().snapshot.usage().shoots_on("seed-1"), 1);
    // the next attempt reads first: the bind was applied
    let attempt = spawn_attempt(&shared);
    api.returns_shoot("6", Some("seed-1")).await;
    let event = api.next().await;
    assert_eq!(event.body["reason"], "SchedulingSuccessful");
    assert!(
        event.body["note"]
            .as_str()
            .unwrap()
            .starts_with("Scheduled to seed \"seed-1\""),
        "{}",
        event.body
    );
    event.echo();
    assert_eq!(attempt.await.unwrap(), Attempt::Skipped);
    assert_eq!(
        (attempts(&shared, "scheduled"), attempts(&shared, "error")),
        (1, 0)
    );
    api.is_quiet().await;
}

/// The same, settled by the watch: the shoot shown on the seed is the success.
#[tokio::test(start_paused = true)]
async fn an_unsettled_bind_is_settled_by_what_the_watch_shows() {
    let (shared, mut api) = unsettled_bind().await;
    // an older, pending version first: nothing is said
    crate::controller::attempt::settled_by_seen(&shared, "garden-a/s1", Some(None), false);
    api.is_quiet().await;
    crate::controller::attempt::settled_by_seen(
        &shared,
        "garden-a/s1",
        Some(Some("seed-1")),
        false,
    );
    api.accepts_success_event().await;
    assert_eq!(
        (attempts(&shared, "scheduled"), attempts(&shared, "error")),
        (1, 0)
    );
    // said once
    crate::controller::attempt::settled_by_seen(
        &shared,
        "garden-a/s1",
        Some(Some("seed-1")),
        false,
    );
    api.is_quiet().await;
}

/// A read turned away with 429 and `Retry-After` is sent again after the pause the server
/// asked for, each try through the limiter and counted; a write is never sent twice.
#[tokio::test(start_paused = true)]
async fn a_throttled_read_is_sent_again_after_retry_after_and_a_write_is_not() {
    let (connection, mut api) = mock_api();
    let metrics = Metrics::new();
    let client = connection.client_with(Layers {
        qps: 50.0,
        burst: 100,
        fence: Leadership::always(),
        counters: &[&metrics.runtime.rest_client],
        host: "mock",
        limit: REQUEST_TIMEOUT,
        activity: Arc::default(),
        retry_reads: true,
    });
    let shoots: kube::Api<crate::api::Shoot> = kube::Api::namespaced(client, "garden-a");
    let read = tokio::spawn({
        let shoots = shoots.clone();
        async move { shoots.get("s1").await }
    });
    let start = Instant::now();
    let first = api.next().await;
    first.respond.send_response(
        http::Response::builder()
            .status(429)
            .header("retry-after", "3")
            .header("content-type", "application/json")
            .body(kube::client::Body::from(
                serde_json::to_vec(&json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "reason": "TooManyRequests", "code": 429, "message": "storage is (re)initializing"}))
                .unwrap(),
            ))
            .unwrap(),
    );
    let second = api.next().await;
    assert_eq!(start.elapsed(), Duration::from_secs(3), "after Retry-After");
    second.reply(server_shoot("5", None));
    read.await.unwrap().unwrap();
    assert_eq!(metrics.runtime.rest_client.count("429", "GET", "mock"), 1);
    assert_eq!(metrics.runtime.rest_client.count("200", "GET", "mock"), 1);

    let write = tokio::spawn(async move {
        shoots
            .patch(
                "s1",
                &kube::api::PatchParams::default(),
                &kube::api::Patch::Merge(json!({})),
            )
            .await
    });
    api.refuses(429, "TooManyRequests").await;
    assert!(write.await.unwrap().is_err());
    api.is_quiet().await;
}

/// A bind throttled with 429 and a Retry-After of 30 s — in the Status body as kube-apiserver
/// sends it, or only in the header, with a text body, as a gateway sends it — is tried again no
/// sooner than the server asked, though retrySyncPeriod is 7 s.
#[tokio::test(start_paused = true)]
async fn a_throttled_bind_is_retried_no_sooner_than_retry_after() {
    let from_api_server = || {
        json_response(
            429,
            &json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                    "message": "Too many requests, please try again later.", "reason": "TooManyRequests",
                    "details": {"retryAfterSeconds": 30}, "code": 429}),
        )
    };
    let from_gateway = || {
        http::Response::builder()
            .status(429)
            .header("retry-after", "30")
            .header("content-type", "text/plain")
            .body(kube::client::Body::from(b"slow down".to_vec()))
            .unwrap()
    };
    type Answer = fn() -> http::Response<kube::client::Body>;
    let answers: [(&str, Answer); 2] = [
        ("Status body", from_api_server),
        ("header only", from_gateway),
    ];
    for (what, answer) in answers {
        let (client, mut api) = mock_api();
        let shared = controller(client);
        let attempt = spawn_attempt(&shared);
        api.returns_shoot("5", None).await;
        let put = api.next().await;
        put.respond.send_response(answer());
        api.accepts_failure_report().await;
        assert_eq!(attempt.await.unwrap(), Attempt::Error, "{what}");
        let t = Instant::now();
        let key = shared.queue().next().await.unwrap();
        assert_eq!(key.to_string(), "garden-a/s1");
        let waited = t.elapsed();
        assert!(
            waited >= Duration::from_secs(29),
            "{what}: retried after {waited:?}, before the server's Retry-After"
        );
        assert_eq!(
            metric(
                &shared,
                "gardener_scheduler_bind_errors_total{code=\"429\"}"
            )
            .as_deref(),
            Some("1"),
            "{what}"
        );
    }
}

fn elected_config() -> crate::config::LeaderElection {
    crate::config::LeaderElection {
        lease_duration: Duration::from_secs(4),
        renew_deadline: Duration::from_secs(3),
        retry_period: Duration::from_millis(500),
        ..Default::default()
    }
}

/// The fence checks the lease when a write is sent, after the rate-limit wait: a write queued
/// behind the limiter while the lease is lost never reaches the server; a write on the wire is
/// abandoned once the lease could have passed on.
#[tokio::test(start_paused = true)]
async fn writes_are_fenced_when_sent_not_when_queued() {
    let (connection, mut api) = mock_api();
    let (tx, leadership) = Leadership::elected(&elected_config());
    tx.send(Some(Instant::now())).unwrap();
    let client = connection.client_with(Layers {
        qps: 1.0,
        burst: 1,
        fence: leadership.clone(),
        counters: &[],
        host: "mock",
        limit: REQUEST_TIMEOUT,
        activity: Arc::default(),
        retry_reads: true,
    });
    let events: kube::Api<crate::api::Shoot> = kube::Api::namespaced(client, "garden-a");
    let patch = json!({"metadata": {"labels": {"a": "b"}}});
    let pp = kube::api::PatchParams::default();
    // a label patch of the shoot, as its own task
    let write = || {
        let (events, patch, pp) = (events.clone(), patch.clone(), pp.clone());
        async move {
            events
                .patch("s1", &pp, &kube::api::Patch::Merge(&patch))
                .await
        }
    };

    // the first write takes the one token and is answered
    let first = tokio::spawn(write());
    api.next().await.reply(server_shoot("6", None));
    first.await.unwrap().unwrap();

    // the second waits a second for a token; meanwhile the lease is lost
    let second = tokio::spawn(write());
    tokio::time::sleep(Duration::from_millis(100)).await;
    tx.send(None).unwrap();
    let err = second.await.unwrap().unwrap_err();
    assert!(err.to_string().contains("does not hold the lease"), "{err}");
    api.is_quiet().await;

    // leading again: a write that gets no answer is abandoned when the lease could end
    tokio::time::sleep(Duration::from_secs(2)).await;
    let renewed = Instant::now();
    tx.send(Some(renewed)).unwrap();
    let third = tokio::spawn(write());
    let (_req, _hold) = api.next_request().await.unwrap();
    let err = third.await.unwrap().unwrap_err();
    assert!(err.to_string().contains("lease could have passed"), "{err}");
    // leaseDuration 4 s less the 1 s margin after the renewal started
    assert_eq!(renewed.elapsed(), Duration::from_secs(3));
    assert!(!leadership.is_leader());
}

fn lease_json(holder: &str, rv: u64) -> Value {
    json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
           "metadata": {"name": "gardener-scheduler-leader-election", "namespace": "garden", "resourceVersion": rv.to_string()},
           "spec": {"holderIdentity": holder, "leaseDurationSeconds": 4,
                    "renewTime": "2026-12-01T00:00:00.000000Z", "acquireTime": "2026-12-01T00:00:00.000000Z",
                    "leaseTransitions": 1}})
}

fn throttled() -> http::Response<kube::client::Body> {
    json_response(
        429,
        &json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                "message": "Too many requests, please try again later.", "reason": "TooManyRequests",
                "details": {"retryAfterSeconds": 2}, "code": 429}),
    )
}

/// Half of all lease requests answered 429 with Retry-After: 2 for 30 s: every renewal
/// attempt tries again within renewDeadline, so leadership is never lost.
#[tokio::test(start_paused = true)]
async fn lease_renewals_survive_a_storm_of_throttled_answers() {
    let (connection, mut api) = mock_api();
    let cfg = elected_config();
    let (tx, leadership) = Leadership::elected(&cfg);
    // the process's own lease client: its limiter, no fence, no read retries of its own
    let clients = ApiClients::new(
        &connection,
        &crate::config::ClientConnection::default(),
        &Leadership::always(),
        &Metrics::new(),
        REQUEST_TIMEOUT,
    );
    let elector = crate::controller::leader::Elector::reporting_to(
        clients.lease.build(),
        &cfg,
        "me".into(),
        tx,
    );
    let (_stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    tokio::spawn(elector.run(stop_rx, || None, |_| {}));
    let start = Instant::now();
    let mut rv = 1u64;
    let mut holder = String::new();
    let mut lost_at = None;
    let mut requests = 0;
    // xorshift: which requests the storm throttles, reproducibly
    let mut rng = 0x2545_f491_4f6c_dd1du64;
    while start.elapsed() < Duration::from_secs(40) {
        let Ok(Some((req, respond))) =
            tokio::time::timeout(Duration::from_secs(1), api.next_request()).await
        else {
            continue;
        };
        requests += 1;
        let storm =
            start.elapsed() > Duration::from_secs(5) && start.elapsed() < Duration::from_secs(35);
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        if storm && rng.is_multiple_of(2) {
            respond.send_response(throttled());
        } else {
            answer_lease(req, respond, &mut rv, &mut holder).await;
        }
        if start.elapsed() > Duration::from_secs(2) && !leadership.is_leader() && lost_at.is_none()
        {
            lost_at = Some(start.elapsed());
        }
    }
    assert_eq!(holder, "me");
    assert_eq!(lost_at, None, "leadership was lost during the storm");
    // two requests per renewal every 500 ms, and the retries within the storm
    assert!(
        requests < 40 * 2 * 2 * 2,
        "{requests} lease requests in 40 s"
    );
}

async fn answer_lease(
    req: http::Request<kube::client::Body>,
    respond: SendResponse<http::Response<kube::client::Body>>,
    rv: &mut u64,
    holder: &mut String,
) {
    let method = req.method().clone();
    let bytes = req.into_body().collect_bytes().await.unwrap();
    match method.as_str() {
        "GET" if holder.is_empty() => respond.send_response(failure(404, "NotFound")),
        "GET" => respond.send_response(ok(lease_json(holder, *rv))),
        "POST" | "PUT" => {
            let mut body: Value = serde_json::from_slice(&bytes).unwrap();
            *rv += 1;
            *holder = body["spec"]["holderIdentity"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            body["metadata"]["resourceVersion"] = json!(rv.to_string());
            respond.send_response(ok(body));
        }
        other => panic!("unexpected {other}"),
    }
}

type StreamBody = crate::controller::client::stack::BoxBody;
/// The mock server's side, answering with [`StreamBody`].
type StreamServer =
    tower_test::mock::Handle<http::Request<kube::client::Body>, http::Response<StreamBody>>;

fn body_of(v: &Value) -> StreamBody {
    use http_body_util::BodyExt;
    Box::new(
        http_body_util::Full::new(bytes::Bytes::from(serde_json::to_vec(v).unwrap()))
            .map_err(|never| match never {}),
    )
}

fn answered(v: &Value) -> http::Response<StreamBody> {
    http::Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .body(body_of(v))
        .unwrap()
}

/// A body that never sends a byte: a black-holed watch (the headers came, then nothing).
fn silent() -> http::Response<StreamBody> {
    http::Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .body(
            Box::new(http_body_util::StreamBody::new(futures::stream::pending::<
                Result<http_body::Frame<bytes::Bytes>, tower::BoxError>,
            >())) as StreamBody,
        )
        .unwrap()
}

/// A controller without objects, every feed running against a mock server whose answers stream.
fn every_feed() -> (Arc<Shared>, StreamServer, Vec<tokio::task::JoinHandle<()>>) {
    let (svc, handle) =
        tower_test::mock::pair::<http::Request<kube::client::Body>, http::Response<StreamBody>>();
    let shared = controller_without_objects(Connection::mock(svc));
    let feeds = watch::spawn_all(&shared);
    (shared, handle, feeds)
}

/// A shoot watch that goes silent (black-holed: headers, then nothing) is dropped after 40 s
/// and the kind listed again, which brings the shoot created meanwhile; a feed that stays
/// silent for over 60 s makes `/readyz` fail and shows in the metric.
#[tokio::test(start_paused = true)]
async fn a_black_holed_watch_is_noticed_listed_again_and_shown() {
    let (shared, mut handle, _feeds) = every_feed();
    let start = Instant::now();
    let group = "/apis/core.gardener.cloud/v1beta1";
    let mut shoot_lists = Vec::new();
    let mut held = Vec::new();
    let mut synced_at = None;
    let mut unready_at = None;
    while start.elapsed() < Duration::from_secs(150) {
        if synced_at.is_none() && shared.unsynced().is_empty() {
            synced_at = Some(start.elapsed());
        }
        if unready_at.is_none() && !shared.stale_feeds().is_empty() {
            unready_at = Some(start.elapsed());
        }
        let Ok(Some((req, respond))) =
            tokio::time::timeout(Duration::from_secs(1), handle.next_request()).await
        else {
            continue;
        };
        let path = req.uri().path().to_string();
        let watching = req.uri().query().unwrap_or_default().contains("watch=true");
        if path == format!("{group}/shoots") {
            if watching {
                // every shoot watch is black-holed
                respond.send_response(silent());
            } else {
                let names: Vec<&str> = if shoot_lists.is_empty() {
                    vec!["a"]
                } else {
                    vec!["a", "b"]
                };
                shoot_lists.push(start.elapsed());
                let items: Vec<Value> = names
                    .iter()
                    .map(|n| {
                        let mut s =
                            serde_json::to_value(ShootBuilder::new("garden-a", n).build()).unwrap();
                        s["metadata"]["resourceVersion"] = json!("10");
                        s
                    })
                    .collect();
                respond.send_response(answered(&list_of("ShootList", "10", items)));
            }
        } else if watching {
            // the other kinds' watches end cleanly, as a healthy server ends them
            held.push(respond);
        } else {
            respond.send_response(answered(&list_of("List", "10", vec![])));
        }
    }
    let synced = synced_at.expect("synced");
    assert!(synced < Duration::from_secs(1), "synced at {synced:?}");
    assert!(shoot_lists.len() >= 3, "listed again: {shoot_lists:?}");
    // listed again 40 s after the silent watch started (plus the check's second)
    let again = shoot_lists[1];
    assert!(
        again >= Duration::from_secs(40) && again <= Duration::from_secs(42),
        "{shoot_lists:?}"
    );
    assert!(
        shared.lock().pending("garden-a/b").is_some(),
        "the relist brought b"
    );
    let unready = unready_at.expect("/readyz turned unready");
    assert!(
        unready > Duration::from_secs(60) && unready <= Duration::from_secs(62),
        "unready at {unready:?}"
    );
    assert!(shared.stale_feeds().iter().any(|f| f.starts_with("Shoot")));
    assert!(
        metric(
            &shared,
            "gardener_scheduler_watch_restarts_total{kind=\"Shoot\",reason=\"silent\"}"
        )
        .is_some_and(|v| v.parse::<u64>().unwrap() >= 2)
    );
    // the feed still lists: it has data, so the process stays fit to lead
    assert_eq!(shared.unfit_to_lead(), None);
    drop(held);
}

/// A relist after 410 Gone that takes longer than a watch may stay silent, and longer than a
/// feed may be silent before `/readyz` fails (four pages, 18 s each: a page's deadline is
/// 20 s), runs to its end, once: the silence of the shoot watch is not counted while it lists,
/// nor against the list that replaced it, and the shoot feed is never reported stale meanwhile
/// or after.
#[tokio::test(start_paused = true)]
async fn a_relist_longer_than_the_watch_silence_completes_once() {
    let (shared, mut handle, _feeds) = every_feed();
    let start = Instant::now();
    let group = "/apis/core.gardener.cloud/v1beta1";
    let shoot = |name: &str| {
        let mut s = serde_json::to_value(ShootBuilder::new("garden-a", name).build()).unwrap();
        s["metadata"]["resourceVersion"] = json!("10");
        s
    };
    let (mut list_starts, mut shoot_watches) = (0, 0);
    let mut held = Vec::new();
    // the relist ends at about 72 s; the held watch after it would be silent from 112 s on
    let mut unready = Vec::new();
    while start.elapsed() < Duration::from_secs(105) {
        if shared.stale_feeds().iter().any(|f| f.starts_with("Shoot")) {
            unready.push(start.elapsed().as_secs());
        }
        let Ok(Some((req, respond))) =
            tokio::time::timeout(Duration::from_secs(1), handle.next_request()).await
        else {
            continue;
        };
        let path = req.uri().path().to_string();
        let query = req.uri().query().unwrap_or_default().to_string();
        if path != format!("{group}/shoots") {
            if query.contains("watch=true") {
                held.push(respond);
            } else {
                respond.send_response(answered(&list_of("List", "10", vec![])));
            }
            continue;
        }
        if query.contains("watch=true") {
            shoot_watches += 1;
            if shoot_watches == 1 {
                let gone = json!({"type": "ERROR", "object": {"kind": "Status", "apiVersion": "v1",
                    "status": "Failure", "message": "too old resource version", "reason": "Expired",
                    "code": 410}});
                respond.send_response(answered(&gone));
            } else {
                held.push(respond);
            }
            continue;
        }
        let page = match ["continue=p2", "continue=p3", "continue=p4"]
            .iter()
            .position(|c| query.contains(c))
        {
            Some(p) => p + 2,
            None => {
                list_starts += 1;
                1
            }
        };
        let mut list = list_of("Shoot", "20", vec![shoot(["b", "c", "d", "e"][page - 1])]);
        if page < 4 {
            list["metadata"]["continue"] = json!(format!("p{}", page + 1));
        }
        if list_starts == 1 {
            // the first list: one shoot, at once
            respond.send_response(answered(&list_of("Shoot", "10", vec![shoot("a")])));
        } else {
            tokio::spawn(async move {
                tokio::time::sleep(Duration::from_secs(18)).await;
                respond.send_response(answered(&list));
            });
        }
    }
    assert_eq!(list_starts, 2, "the initial list and one relist");
    assert!(
        unready.is_empty(),
        "the shoot feed was reported stale at {unready:?} s"
    );
    let st = shared.lock();
    for s in ["b", "c", "d", "e"] {
        assert!(
            st.pending(&format!("garden-a/{s}")).is_some(),
            "{s} from the relist"
        );
    }
    assert!(
        st.pending("garden-a/a").is_none(),
        "a, not relisted, is gone"
    );
    drop(held);
}

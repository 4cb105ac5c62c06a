//! Events the API server turns away for now: an event answered 429 or 5xx is sent again after
//! the server's `Retry-After`, within a bounded number of tries, and one that still fails is
//! dropped and counted in `gardener_scheduler_events_dropped_total`.

use crate::controller::events::{Reporter, SEND_TRIES};
use crate::controller::tests::*;
use serde_json::json;
use tokio::time::Instant;

fn reporter(client: &Connection, m: &Metrics) -> Reporter {
    Reporter::new(
        client.client(),
        "me".into(),
        REQUEST_TIMEOUT,
        10,
        m.events_dropped.clone(),
        m.events_queued.clone(),
    )
}

/// 429 with `details.retryAfterSeconds`, as kube-apiserver sends it.
fn throttled(seconds: u32) -> Response<Body> {
    json_response(
        429,
        &json!({"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 429,
                "reason": "TooManyRequests", "message": "injected throttle",
                "details": {"retryAfterSeconds": seconds}}),
    )
}

#[tokio::test(start_paused = true)]
async fn an_event_answered_429_is_sent_again_after_retry_after() {
    let (client, mut api) = mock_api();
    let m = Metrics::new();
    let reporter = reporter(&client, &m);
    reporter.deferred(&observed_shoot(), "a freeze");
    let first = api.next().await;
    assert_eq!(
        (first.method.as_str(), first.path.contains("/events")),
        ("POST", true)
    );
    first.respond.send_response(throttled(3));
    let refused = Instant::now();
    let again = api.next().await;
    assert!(
        refused.elapsed() >= Duration::from_secs(3),
        "{:?}",
        refused.elapsed()
    );
    assert_eq!(again.body["reason"], "SchedulingDeferred");
    again.echo();
    assert_eq!(reporter.flush(REQUEST_TIMEOUT).await, 0);
    assert_eq!(m.events_dropped.get(), 0);
    api.is_quiet().await;
}

#[tokio::test(start_paused = true)]
async fn an_event_refused_on_every_try_is_dropped_and_counted() {
    let (client, mut api) = mock_api();
    let m = Metrics::new();
    let reporter = reporter(&client, &m);
    reporter.deferred(&observed_shoot(), "a freeze");
    for _ in 0..SEND_TRIES {
        let event = api.next().await;
        assert!(event.path.contains("/events"), "{}", event.path);
        event.fail(503, "ServiceUnavailable");
    }
    api.is_quiet().await;
    assert_eq!(reporter.flush(REQUEST_TIMEOUT).await, 0);
    assert_eq!(m.events_dropped.get(), 1);
    assert!(
        m.encode()
            .lines()
            .any(|l| l == "gardener_scheduler_events_dropped_total 1")
    );
}

#[tokio::test(start_paused = true)]
async fn an_event_refused_for_good_is_not_sent_again_and_is_counted() {
    let (client, mut api) = mock_api();
    let m = Metrics::new();
    let reporter = reporter(&client, &m);
    reporter.deferred(&observed_shoot(), "a freeze");
    api.next().await.fail(422, "Invalid");
    api.is_quiet().await;
    assert_eq!(reporter.flush(REQUEST_TIMEOUT).await, 0);
    assert_eq!(m.events_dropped.get(), 1);
}

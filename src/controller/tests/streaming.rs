//! How a feed lists its kind: as one streaming watch where the server serves it, complete only
//! at the bookmark marked `k8s.io/initial-events-end`; in pages where the server refuses it, or
//! after two streams in a row ended before their marker. The shoot feed runs alone against the
//! mock; the tests answer its requests by hand.

use std::sync::Arc;

use crate::controller::cache::WatchedKind;
use crate::controller::tests::*;
use serde_json::{Value, json};

const SHOOTS: &str = "/apis/core.gardener.cloud/v1beta1/shoots";

/// The bookmark that ends a streamed state at `rv`.
fn end_of_state(rv: &str) -> (&'static str, Value) {
    (
        "BOOKMARK",
        json!({"apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
               "metadata": {"resourceVersion": rv,
                            "annotations": {"k8s.io/initial-events-end": "true"}}}),
    )
}

fn gone() -> (&'static str, Value) {
    (
        "ERROR",
        json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
               "message": "too old resource version", "reason": "Expired", "code": 410}),
    )
}

fn is_streaming_list(call: &Call) -> bool {
    let q = &call.query;
    q.contains("watch=true")
        && q.contains("sendInitialEvents=true")
        && q.contains("resourceVersionMatch=NotOlderThan")
        && q.contains("allowWatchBookmarks=true")
        && q.contains("timeoutSeconds=600")
}

fn is_page(call: &Call) -> bool {
    !call.query.contains("watch=true") && call.query.contains("limit=500")
}

/// A watch of changes from `rv`, with the usual timeout.
fn is_watch_from(call: &Call, rv: &str) -> bool {
    let q = &call.query;
    q.contains("watch=true")
        && !q.contains("sendInitialEvents")
        && q.contains("timeoutSeconds=30")
        && q.contains(&format!("resourceVersion={rv}"))
}

fn lists(shared: &Shared, mode: &str) -> u64 {
    metric(
        shared,
        &format!("gardener_scheduler_lists_total{{kind=\"Shoot\",mode=\"{mode}\"}}"),
    )
    .map_or(0, |v| v.parse().unwrap())
}

/// Answers `page` as the whole state at `rv`; the kind is then synced and watched from `rv`.
/// That watch ends in a 410: returns the request of the list that follows.
async fn a_whole_page_then_gone(
    api: &mut ApiServer,
    shared: &Shared,
    page: Call,
    rv: &str,
) -> Call {
    page.reply(list_of("Shoot", rv, vec![shoot_json("s1", "9", None)]));
    let watch = api.next().await;
    assert!(shared.is_synced(WatchedKind::Shoot));
    assert!(is_watch_from(&watch, rv), "{}", watch.query);
    watch.respond.send_response(watch_events(&[gone()]));
    api.next().await
}

/// A controller without leader election, listing as it does by default, its shoot feed running.
fn shoot_feed(client: Connection) -> (Arc<Shared>, tokio::task::JoinHandle<()>) {
    let c = Controller::new(
        load_str("leaderElection: {leaderElect: false}\n").unwrap(),
        client,
    )
    .unwrap();
    let shared = Arc::clone(c.shared());
    let feed = tokio::spawn(watch::run_shoot_feed_for_tests(shared.clone()));
    (shared, feed)
}

#[tokio::test]
async fn a_streamed_list_counts_only_once_its_end_marker_arrives() {
    let (client, mut api) = mock_api();
    let (shared, feed) = shoot_feed(client);

    // a stream that ends before its marker: what it brought is not the whole state
    let first = api.next().await;
    assert_eq!(first.path, SHOOTS);
    assert!(is_streaming_list(&first), "{}", first.query);
    first.respond.send_response(watch_events(&[
        ("ADDED", shoot_json("s1", "11", None)),
        ("ADDED", shoot_json("s2", "12", Some("seed-1"))),
    ]));
    let second = api.next().await;
    assert!(
        !shared.is_synced(WatchedKind::Shoot),
        "synced without the end marker"
    );
    assert!(is_streaming_list(&second), "{}", second.query);
    // the next stream is complete: s2 is gone, s3 is new
    second.respond.send_response(watch_events(&[
        ("ADDED", shoot_json("s1", "11", None)),
        ("ADDED", shoot_json("s3", "13", None)),
        end_of_state("20"),
    ]));
    let third = api.next().await;
    assert!(shared.is_synced(WatchedKind::Shoot));
    assert_eq!(shared.lock().known_shoots(), 2, "s1 and s3, not s2");
    assert_eq!(shared.lock().pending_count(), 2);
    // changes are watched from the marker's version, with the usual timeout
    assert!(is_watch_from(&third, "20"), "{}", third.query);
    assert_eq!(lists(&shared, "streaming"), 2);
    assert_eq!(lists(&shared, "paged"), 0);
    drop(third);
    feed.abort();
}

#[tokio::test]
async fn a_server_that_refuses_streaming_lists_is_listed_in_pages_from_then_on() {
    let (client, mut api) = mock_api();
    let (shared, feed) = shoot_feed(client);

    let first = api.next().await;
    assert!(is_streaming_list(&first), "{}", first.query);
    first.fail(422, "Invalid");
    let page = api.next().await;
    assert!(is_page(&page), "{}", page.query);
    // after a 410: listed again, in pages without asking for a stream first
    let again = a_whole_page_then_gone(&mut api, &shared, page, "10").await;
    assert!(is_page(&again), "{}", again.query);
    // counted once the server answers the first page
    assert_eq!(lists(&shared, "paged"), 1);
    again.reply(list_of("Shoot", "12", vec![shoot_json("s1", "9", None)]));
    let watch = api.next().await;
    assert!(is_watch_from(&watch, "12"), "{}", watch.query);
    assert_eq!(lists(&shared, "paged"), 2);
    assert_eq!(lists(&shared, "streaming"), 0);
    drop(watch);
    feed.abort();
}

#[tokio::test]
async fn two_streams_ended_before_their_marker_make_the_next_list_paged_and_the_one_after_streamed()
{
    let (client, mut api) = mock_api();
    let (shared, feed) = shoot_feed(client);

    for _ in 0..2 {
        let call = api.next().await;
        assert!(is_streaming_list(&call), "{}", call.query);
        call.respond
            .send_response(watch_events(&[("ADDED", shoot_json("s1", "11", None))]));
    }
    let page = api.next().await;
    assert!(!shared.is_synced(WatchedKind::Shoot));
    assert!(is_page(&page), "{}", page.query);
    let relist = a_whole_page_then_gone(&mut api, &shared, page, "10").await;
    assert!(
        is_streaming_list(&relist),
        "the server did not refuse streams: the next list streams again: {}",
        relist.query
    );
    // a list is counted once the server has answered its request
    assert_eq!(lists(&shared, "streaming"), 2);
    assert_eq!(lists(&shared, "paged"), 1);
    relist
        .respond
        .send_response(watch_events(&[end_of_state("30")]));
    let watch = api.next().await;
    assert!(is_watch_from(&watch, "30"), "{}", watch.query);
    assert_eq!(lists(&shared, "streaming"), 3);
    drop(watch);
    feed.abort();
}

#[tokio::test]
async fn a_410_in_the_middle_of_a_stream_lists_again_from_scratch() {
    let (client, mut api) = mock_api();
    let (shared, feed) = shoot_feed(client);

    let first = api.next().await;
    assert!(is_streaming_list(&first), "{}", first.query);
    first.respond.send_response(watch_events(&[
        ("ADDED", shoot_json("s1", "11", None)),
        gone(),
    ]));
    let second = api.next().await;
    assert!(!shared.is_synced(WatchedKind::Shoot), "synced on a 410");
    assert!(is_streaming_list(&second), "{}", second.query);
    second.respond.send_response(watch_events(&[
        ("ADDED", shoot_json("s2", "12", None)),
        end_of_state("20"),
    ]));
    let watch = api.next().await;
    assert!(shared.is_synced(WatchedKind::Shoot));
    assert_eq!(
        shared.lock().known_shoots(),
        1,
        "only what the whole stream brought"
    );
    assert!(is_watch_from(&watch, "20"), "{}", watch.query);
    drop(watch);
    feed.abort();
}

#[tokio::test]
async fn a_stream_answered_429_while_the_server_starts_is_listed_in_pages_at_once_and_streamed_next_time()
 {
    let (client, mut api) = mock_api();
    let (shared, feed) = shoot_feed(client);

    let first = api.next().await;
    assert!(is_streaming_list(&first), "{}", first.query);
    first.fail(429, "TooManyRequests");
    // the page is asked in the same try: no backoff between the refused stream and the page
    let page = tokio::time::timeout(std::time::Duration::from_millis(500), api.next())
        .await
        .expect("the page follows the refused stream without a backoff");
    assert!(is_page(&page), "{}", page.query);
    let relist = a_whole_page_then_gone(&mut api, &shared, page, "10").await;
    assert!(
        is_streaming_list(&relist),
        "a 429 is not a refusal of streaming: {}",
        relist.query
    );
    assert_eq!(lists(&shared, "paged"), 1);
    drop(relist);
    feed.abort();
}

/// A watch answer through the production stack that sends `line` every `every`, and never ends.
fn endless_lines(
    line: Value,
    every: std::time::Duration,
) -> Response<crate::controller::client::stack::BoxBody> {
    let mut text = serde_json::to_vec(&line).unwrap();
    text.push(b'\n');
    let frames = futures::stream::unfold(text, move |text| async move {
        tokio::time::sleep(every).await;
        let frame = http_body::Frame::data(bytes::Bytes::from(text.clone()));
        Some((Ok::<_, tower::BoxError>(frame), text))
    });
    Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .body(Box::new(http_body_util::StreamBody::new(Box::pin(frames)))
            as crate::controller::client::stack::BoxBody)
        .unwrap()
}

#[tokio::test(start_paused = true)]
async fn a_stream_of_bookmarks_without_the_end_marker_is_given_up_and_listed_in_pages() {
    let (svc, mut handle) = tower_test::mock::pair::<
        http::Request<Body>,
        Response<crate::controller::client::stack::BoxBody>,
    >();
    let (shared, feed) = shoot_feed(Connection::mock(svc));

    let (req, respond) = handle.next_request().await.unwrap();
    let query = req.uri().query().unwrap_or_default().to_string();
    assert!(query.contains("sendInitialEvents=true"), "{query}");
    let bookmark = json!({"type": "BOOKMARK", "object": {
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
        "metadata": {"resourceVersion": "5"}}});
    respond.send_response(endless_lines(bookmark, std::time::Duration::from_secs(5)));
    // the clock is the test's: the stall bound passes without waiting for it
    let (req, _respond) = tokio::time::timeout(
        crate::controller::feed::stream_limits::STREAM_STALL * 2,
        handle.next_request(),
    )
    .await
    .expect("the stream is given up once no object came for the stall bound")
    .unwrap();
    let query = req.uri().query().unwrap_or_default().to_string();
    assert!(
        !query.contains("watch=true") && query.contains("limit=500"),
        "the list is made in pages: {query}"
    );
    assert!(!shared.is_synced(WatchedKind::Shoot));
    feed.abort();
}

#[tokio::test]
async fn a_stream_of_unreadable_events_is_given_up_at_its_bound_and_listed_in_pages() {
    let (client, mut api) = mock_api();
    let (_shared, feed) = shoot_feed(client);

    let first = api.next().await;
    assert!(is_streaming_list(&first), "{}", first.query);
    let mut body = Vec::new();
    body.extend_from_slice(
        &serde_json::to_vec(&json!({"type": "ADDED", "object": shoot_json("s1", "11", None)}))
            .unwrap(),
    );
    body.push(b'\n');
    for _ in 0..crate::controller::feed::stream_limits::STREAM_UNREADABLE {
        body.extend_from_slice(b"not an event\n");
    }
    first.respond.send_response(
        Response::builder()
            .status(200)
            .header("content-type", "application/json")
            .body(Body::from(body))
            .unwrap(),
    );
    // without the bound, a stream that ends before its marker is streamed once more
    let page = api.next().await;
    assert!(is_page(&page), "{}", page.query);
    drop(page);
    feed.abort();
}

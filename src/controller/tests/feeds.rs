//! Watch failures: a watch closed by the server, a connection that breaks, an expired
//! resourceVersion (410 Gone). Every feed of the controller runs against the mock; the tests
//! answer lists and watches by hand and then schedule what the cache holds.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::controller::tests::*;
use serde_json::{Value, json};
use tower_test::mock::SendResponse;

const GROUP: &str = "/apis/core.gardener.cloud/v1beta1";

fn list(kind: &str, rv: &str, items: Vec<Value>) -> Response<Body> {
    ok(list_of(kind, rv, items))
}

fn resource_version(query: &str) -> String {
    query
        .split('&')
        .find_map(|kv| kv.strip_prefix("resourceVersion="))
        .unwrap_or_default()
        .to_string()
}

/// Answers the kinds other than shoots: one ready seed with room for ten, CloudProfile aws,
/// nothing else. Watches are held open. Returns the call back when it is about shoots.
fn answer_other_kinds(call: Call, held: &mut Vec<SendResponse<Response<Body>>>) -> Option<Call> {
    let watching = call.query.contains("watch=true");
    let items = match call.path.as_str() {
        p if p == format!("{GROUP}/shoots") => return Some(call),
        p if p == format!("{GROUP}/seeds") => vec![
            serde_json::to_value(
                SeedBuilder::new("seed-1")
                    .allocatable("shoots", "10")
                    .build(),
            )
            .unwrap(),
        ],
        p if p == format!("{GROUP}/cloudprofiles") => vec![json!({
            "apiVersion": "core.gardener.cloud/v1beta1", "kind": "CloudProfile",
            "metadata": {"name": "aws"}, "spec": {"type": "aws"}})],
        p if p == format!("{GROUP}/namespacedcloudprofiles")
            || p == format!("{GROUP}/projects")
            || p == "/api/v1/namespaces/garden/configmaps" =>
        {
            vec![]
        }
        other => panic!("unexpected request {} {other}", call.method),
    };
    if watching {
        held.push(call.respond);
    } else {
        call.respond.send_response(list("Any", "10", items));
    }
    None
}

/// Decides every queued shoot, answering its requests as a server that accepts each bind.
/// Returns how many bindings each shoot got.
async fn schedule_queued(
    api: &mut ApiServer,
    shared: &Arc<Shared>,
    held: &mut Vec<SendResponse<Response<Body>>>,
) -> BTreeMap<String, usize> {
    let mut binds: BTreeMap<String, usize> = BTreeMap::new();
    let shoots = format!("{GROUP}/namespaces/garden-a/shoots/");
    while let Ok(Some(key)) =
        tokio::time::timeout(Duration::from_millis(300), shared.queue().next()).await
    {
        let mut attempt = tokio::spawn({
            let (shared, key) = (shared.clone(), key.clone());
            async move { schedule_one(&shared, &key).await }
        });
        let mut done = false;
        loop {
            tokio::select! {
                r = &mut attempt, if !done => { r.unwrap(); done = true; }
                // the success event is sent after the attempt, off its path
                _ = shared.reporter.flush(Duration::from_secs(60)), if done => break,
                call = api.next() => {
                    if let Some(call) = answer_other_kinds_if_feed(call, held) {
                        let name = call.path.strip_prefix(&shoots).map(str::to_string);
                        match (call.method.as_str(), name) {
                            ("GET", Some(n)) => call.respond.send_response(ok(shoot_json(&n, "30", None))),
                            ("PUT", Some(n)) if n.ends_with("/binding") => {
                                let n = n.trim_end_matches("/binding").to_string();
                                *binds.entry(n.clone()).or_default() += 1;
                                call.reply(shoot_json(&n, "31", Some("seed-1")));
                            }
                            ("POST", _) if call.path.ends_with("/events") => {
                                let body = call.body.clone();
                                call.reply(body);
                            }
                            (m, _) => panic!("unexpected request {m} {}", call.path),
                        }
                    }
                }
            }
        }
        shared.queue().done(&key);
    }
    binds
}

/// Feed requests (lists and watches of any kind) are answered or held; others come back.
fn answer_other_kinds_if_feed(
    call: Call,
    held: &mut Vec<SendResponse<Response<Body>>>,
) -> Option<Call> {
    if call.path == format!("{GROUP}/shoots") {
        held.push(call.respond);
        return None;
    }
    let feed = call.path.starts_with(GROUP) && !call.path.contains("/namespaces/")
        || call.path == "/api/v1/namespaces/garden/configmaps";
    if feed {
        answer_other_kinds(call, held)
    } else {
        Some(call)
    }
}

#[tokio::test]
async fn an_expired_resource_version_relists_and_every_pending_shoot_is_bound_once() {
    let (client, mut api) = mock_api();
    let shared = controller_without_objects(client);
    let feeds = watch::spawn_all(&shared);
    let mut held = Vec::new();
    let (mut lists, mut watches) = (0, Vec::new());
    // a, b pending and c bound; while the watch is down b is deleted and d created
    while !(watches.last().is_some_and(|rv| rv == "20") && shared.unsynced().is_empty()) {
        let Ok(call) = tokio::time::timeout(Duration::from_millis(50), api.next()).await else {
            continue;
        };
        let Some(call) = answer_other_kinds(call, &mut held) else {
            continue;
        };
        if call.query.contains("watch=true") {
            let rv = resource_version(&call.query);
            watches.push(rv.clone());
            if rv == "10" {
                call.respond.send_response(watch_events(&[(
                    "ERROR",
                    json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                           "message": "too old resource version: 10 (15)", "reason": "Expired", "code": 410}),
                )]));
            } else {
                held.push(call.respond);
            }
        } else {
            lists += 1;
            let items = match lists {
                1 => vec![
                    shoot_json("a", "3", None),
                    shoot_json("b", "4", None),
                    shoot_json("c", "5", Some("seed-1")),
                ],
                2 => vec![
                    shoot_json("a", "3", None),
                    shoot_json("c", "5", Some("seed-1")),
                    shoot_json("d", "18", None),
                ],
                n => panic!("list {n}: one relist is enough"),
            };
            let rv = if lists == 1 { "10" } else { "20" };
            call.respond.send_response(list("Shoot", rv, items));
        }
    }
    assert_eq!(lists, 2, "relisted after 410 Gone");
    assert_eq!(watches, ["10", "20"], "watched again from the new list");
    {
        let st = shared.lock();
        let pending: Vec<String> = st.pending_keys().iter().map(|k| k.to_string()).collect();
        assert_eq!(pending, ["garden-a/a", "garden-a/d"]);
        assert_eq!(st.known_shoots(), 3, "b, deleted meanwhile, is gone");
        assert_eq!(st.snapshot.usage().shoots_on("seed-1"), 1);
    }

    let binds = schedule_queued(&mut api, &shared, &mut held).await;
    assert_eq!(
        binds,
        BTreeMap::from([("a".to_string(), 1), ("d".to_string(), 1)]),
        "every pending shoot bound once, the deleted and the bound ones not at all"
    );
    for s in ["a", "b", "c", "d"] {
        assert_eq!(
            schedule_one(&shared, &format!("garden-a/{s}")).await,
            Attempt::Skipped,
            "{s}"
        );
    }
    api.is_quiet().await;
    assert_eq!(shared.lock().snapshot.usage().shoots_on("seed-1"), 3);
    for f in feeds {
        f.abort();
    }
}

#[tokio::test]
async fn a_closed_watch_and_a_broken_connection_resume_from_the_last_resource_version() {
    let (client, mut api) = mock_api();
    let shared = controller_without_objects(client);
    let feeds = watch::spawn_all(&shared);
    let mut held = Vec::new();
    let (mut lists, mut watches) = (0, Vec::new());
    while !(watches.len() == 3 && shared.unsynced().is_empty()) {
        let Ok(call) = tokio::time::timeout(Duration::from_millis(50), api.next()).await else {
            continue;
        };
        let Some(call) = answer_other_kinds(call, &mut held) else {
            continue;
        };
        if !call.query.contains("watch=true") {
            lists += 1;
            assert_eq!(lists, 1, "no relist: the resourceVersion is still good");
            call.respond
                .send_response(list("Shoot", "10", vec![shoot_json("a", "3", None)]));
            continue;
        }
        watches.push(resource_version(&call.query));
        match watches.len() {
            // one event, then the server ends the watch (as it does after timeoutSeconds)
            1 => call
                .respond
                .send_response(watch_events(&[("ADDED", shoot_json("e", "11", None))])),
            // the connection breaks
            2 => call
                .respond
                .send_error(std::io::Error::other("connection reset by peer")),
            _ => held.push(call.respond),
        }
    }
    assert_eq!(watches, ["10", "11", "11"]);
    let pending: Vec<String> = shared
        .lock()
        .pending_keys()
        .iter()
        .map(|k| k.to_string())
        .collect();
    assert_eq!(pending, ["garden-a/a", "garden-a/e"]);
    let binds = schedule_queued(&mut api, &shared, &mut held).await;
    assert_eq!(
        binds,
        BTreeMap::from([("a".to_string(), 1), ("e".to_string(), 1)])
    );
    for f in feeds {
        f.abort();
    }
}

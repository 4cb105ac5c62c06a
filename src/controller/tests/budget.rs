//! A decision slower than it should be (the test-only `TestSlow` filter) cannot hold up the
//! process: while it runs, `/healthz` answers and the Lease is renewed (both on the control
//! thread), the other shoots are bound, and the slow decision gives up at its budget with a
//! reason the shoot's event shows, is counted, and is tried again.

use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::controller::tests::*;
use crate::predicates::slow::SLOW_CALLS;
use serde_json::json;
use std::io::{Read, Write};
use tokio::time::Instant;

const LEASE_PATH: &str =
    "/apis/coordination.k8s.io/v1/namespaces/garden/leases/gardener-scheduler-leader-election";

/// What the mock API server saw.
#[derive(Default)]
struct Seen {
    renewals: Vec<Instant>,
    bound: Vec<String>,
    event_notes: Vec<String>,
}

fn shoot(name: &str, seed: Option<&str>) -> Value {
    let mut s = server_shoot("5", seed);
    s["metadata"]["name"] = json!(name);
    s["metadata"]["uid"] = json!(format!("u-{name}"));
    s
}

/// Lists three pending shoots (`slow`, `a`, `b`) and seed-1, keeps watches open, holds the
/// Lease, binds, and takes reports; records what it saw in `seen`.
async fn api_server(mut api: ApiServer, seen: Arc<Mutex<Seen>>) {
    let mut watches = Vec::new();
    let mut lease: Option<Value> = None;
    let mut rv = 1u64;
    while let Some((req, respond)) = api.next_request().await {
        let method = req.method().to_string();
        let path = req.uri().path().to_string();
        if req.uri().query().unwrap_or_default().contains("watch=true") {
            watches.push(respond);
            continue;
        }
        let bytes = req.into_body().collect_bytes().await.unwrap();
        let body: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
        let mut stamped = |mut v: Value| {
            rv += 1;
            v["metadata"]["resourceVersion"] = json!(rv.to_string());
            v
        };
        let answer = match (method.as_str(), path.as_str()) {
            ("GET", LEASE_PATH) => match &lease {
                Some(l) => ok(l.clone()),
                None => failure(404, "NotFound"),
            },
            ("POST", p) if p.ends_with("/leases") => {
                let created = stamped(body);
                lease = Some(created.clone());
                ok(created)
            }
            ("PUT", LEASE_PATH) => {
                seen.lock().unwrap().renewals.push(Instant::now());
                let renewed = stamped(body);
                lease = Some(renewed.clone());
                ok(renewed)
            }
            ("GET", p) => ok(first_list(
                p,
                ["slow", "a", "b"].map(|n| shoot(n, None)).to_vec(),
            )),
            ("PUT", p) if p.ends_with("/binding") => {
                let name = p.trim_end_matches("/binding").rsplit('/').next().unwrap();
                seen.lock().unwrap().bound.push(name.to_string());
                ok(stamped(shoot(name, Some("seed-1"))))
            }
            (_, p) if p.contains("/events") => {
                if let Some(note) = body["note"].as_str().or(body["message"].as_str()) {
                    seen.lock().unwrap().event_notes.push(note.to_string());
                }
                ok(if method == "POST" { body } else { json!({}) })
            }
            ("PATCH", p) if p.ends_with("/status") => {
                let name = p.trim_end_matches("/status").rsplit('/').next().unwrap();
                ok(shoot(name, None))
            }
            _ => failure(404, "NotFound"),
        };
        respond.send_response(answer);
    }
}

/// GET `path` on loopback `port` from the calling thread: the status code and body, or
/// `None` without an answer within 2 s.
fn http_get(port: u16, path: &str) -> Option<(u16, String)> {
    let limit = Duration::from_secs(2);
    let address = std::net::SocketAddr::from(([127, 0, 0, 1], port));
    let mut stream = std::net::TcpStream::connect_timeout(&address, limit).ok()?;
    stream.set_read_timeout(Some(limit)).ok()?;
    let request = format!("GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).ok()?;
    let mut text = String::new();
    stream.read_to_string(&mut text).ok()?;
    let code = text.split_whitespace().nth(1)?.parse().ok()?;
    let body = text.split_once("\r\n\r\n").map(|(_, b)| b.to_string())?;
    Some((code, body))
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

async fn until(what: &str, within: Duration, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < within, "{what}: not within {within:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "current_thread")]
async fn a_slow_decision_gives_up_at_its_budget_while_health_leases_and_other_shoots_go_on() {
    let (connection, api) = mock_api();
    let mut compiled = load_str(
        "leaderElection: {leaderElect: true, leaseDuration: 4s, renewDeadline: 3s, retryPeriod: 500ms}\n\
         schedulers:\n  shoot:\n    streamingLists: false\n    decisionBudget: 500ms\n    backoff: {initial: 1s, max: 2s}\n\
         \x20   filters: [{name: TestSlow, args: {delayMs: 4000, shoots: [garden-a/slow]}}]\n",
    )
    .unwrap();
    let health = free_port();
    let cfg = &mut compiled.config;
    cfg.server.health_probes.bind_address = "127.0.0.1".into();
    cfg.server.health_probes.port = health.into();
    cfg.server.metrics.bind_address = "127.0.0.1".into();
    cfg.server.metrics.port = 0;
    let controller = Controller::new(compiled, connection).unwrap();
    let shared = Arc::clone(controller.shared());
    let seen = Arc::new(Mutex::new(Seen::default()));
    // The API server on a thread of its own, as a real one is outside the process: on the
    // test's runtime, a task waiting for the cache's lock would hold up its answers.
    {
        let seen = seen.clone();
        std::thread::spawn(move || {
            tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap()
                .block_on(api_server(api, seen))
        });
    }
    let slow_before = SLOW_CALLS.load(Ordering::SeqCst);
    let (stop_tx, stop_rx) = tokio::sync::oneshot::channel::<()>();
    let run = tokio::spawn(controller.run(async {
        let _ = stop_rx.await;
    }));

    // the slow decision has started: for the next 4 s it holds a thread and the cache
    until("the slow decision starts", Duration::from_secs(20), || {
        SLOW_CALLS.load(Ordering::SeqCst) > slow_before
    })
    .await;
    let window = Instant::now();
    // probed from a thread of the test's own: what a kubelet would see
    let probes = std::thread::spawn(move || {
        let start = std::time::Instant::now();
        let mut answers = Vec::new();
        while start.elapsed() < Duration::from_millis(3500) {
            answers.push(http_get(health, "/healthz"));
            std::thread::sleep(Duration::from_millis(100));
        }
        answers
    });
    let probes = tokio::task::spawn_blocking(move || probes.join().unwrap())
        .await
        .unwrap();
    assert!(probes.len() >= 10, "{} probes", probes.len());
    for answer in &probes {
        assert_eq!(
            answer,
            &Some((200, "ok".to_string())),
            "/healthz answers within 2 s during a slow decision"
        );
    }
    let renewals: Vec<Instant> = seen
        .lock()
        .unwrap()
        .renewals
        .iter()
        .copied()
        .filter(|t| *t >= window)
        .collect();
    assert!(
        renewals.len() >= 3,
        "the lease is renewed every retryPeriod during the slow decision: {} renewals",
        renewals.len()
    );
    assert!(shared.leadership.is_leader(), "leadership kept");

    // the other shoots are bound; the slow one gave up at its budget, with its reason shown
    until(
        "the other shoots are bound",
        Duration::from_secs(20),
        || {
            let bound = &seen.lock().unwrap().bound;
            bound.contains(&"a".to_string()) && bound.contains(&"b".to_string())
        },
    )
    .await;
    until(
        "the slow shoot's failure event",
        Duration::from_secs(20),
        || {
            seen.lock()
                .unwrap()
                .event_notes
                .iter()
                .any(|n| n.contains("budget of 500 ms") && n.contains("TestSlow"))
        },
    )
    .await;
    assert!(
        !seen.lock().unwrap().bound.contains(&"slow".to_string()),
        "a decision over its budget binds nothing"
    );
    let over = metric(
        &shared,
        "gardener_scheduler_decisions_over_budget_total{stage=\"TestSlow\"}",
    );
    assert!(
        over.as_ref()
            .is_some_and(|v| v.parse::<f64>().unwrap() >= 1.0),
        "counted: {over:?}"
    );
    // and it is tried again
    until(
        "the slow shoot is tried again",
        Duration::from_secs(20),
        || SLOW_CALLS.load(Ordering::SeqCst) >= slow_before + 2,
    )
    .await;

    stop_tx.send(()).unwrap();
    tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("stops")
        .unwrap()
        .unwrap();
}

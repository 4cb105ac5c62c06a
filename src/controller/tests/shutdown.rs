//! A graceful stop (SIGTERM) lets the attempts in flight finish, their events included: the
//! process ends only after the event of a bind that was under way has been published.

use std::time::Duration;

use crate::controller::tests::*;
use serde_json::json;
use tokio::sync::{mpsc, oneshot};
use tokio::time::Instant;
use tower_test::mock::SendResponse;

/// Serves the lists the watches start with (one pending shoot, seed-1, CloudProfile aws,
/// nothing else) and holds their watches open; hands binding PUTs and event POSTs to the test.
async fn api_server(
    mut api: ApiServer,
    writes: mpsc::UnboundedSender<(String, SendResponse<Response<Body>>)>,
) {
    let mut watches = Vec::new();
    while let Some((method, path, respond)) = api.next_but_watches(&mut watches).await {
        let body = match (method.as_str(), path.as_str()) {
            ("GET", p) if p == SHOOT_PATH => server_shoot("5", None),
            ("GET", p) => first_list(p, vec![server_shoot("5", None)]),
            _ => {
                writes.send((format!("{method} {path}"), respond)).unwrap();
                continue;
            }
        };
        respond.send_response(ok(body));
    }
}

/// A controller without leader election, its servers on free loopback ports, and the handle of
/// its mock API server.
fn local_controller() -> (Controller, ApiServer) {
    let (client, api) = mock_api();
    let mut compiled = load_str(
        "leaderElection: {leaderElect: false}\nschedulers: {shoot: {streamingLists: false}}\n",
    )
    .unwrap();
    let cfg = &mut compiled.config;
    for server in [&mut cfg.server.health_probes, &mut cfg.server.metrics] {
        server.bind_address = "127.0.0.1".into();
        server.port = 0;
    }
    (Controller::new(compiled, client).unwrap(), api)
}

#[tokio::test(start_paused = true)]
async fn a_graceful_stop_publishes_the_event_of_the_bind_in_flight_before_exiting() {
    let (controller, api) = local_controller();
    let (writes_tx, mut writes) = mpsc::unbounded_channel();
    tokio::spawn(api_server(api, writes_tx));
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let run = tokio::spawn(controller.run(async {
        let _ = stop_rx.await;
    }));

    let (put, respond) = writes.recv().await.unwrap();
    assert_eq!(put, format!("PUT {SHOOT_PATH}/binding"));
    // SIGTERM arrives while the binding is in flight
    stop_tx.send(()).unwrap();
    tokio::time::sleep(Duration::from_secs(1)).await;
    respond.send_response(ok(server_shoot("6", Some("seed-1"))));

    let (event, respond) = writes.recv().await.unwrap();
    assert_eq!(
        event,
        "POST /apis/events.k8s.io/v1/namespaces/garden-a/events"
    );
    // a slow API server: the event is answered 15 s later, and the process waits for it
    let asked = Instant::now();
    tokio::time::sleep(Duration::from_secs(15)).await;
    assert!(!run.is_finished(), "stopped before the event was published");
    respond.send_response(ok(json!({})));
    run.await.unwrap().unwrap();
    assert!(asked.elapsed() >= Duration::from_secs(15));
    assert!(
        writes.try_recv().is_err(),
        "nothing else was written after the stop"
    );
}

/// Serves three pending shoots and seed-1; answers binding PUTs at once and hands event POSTs to
/// the test.
async fn three_shoots_api_server(
    mut api: ApiServer,
    events: mpsc::UnboundedSender<(String, SendResponse<Response<Body>>)>,
) {
    let mut watches = Vec::new();
    let shoot = |name: &str| {
        let mut s = server_shoot("5", None);
        s["metadata"]["name"] = json!(name);
        s["metadata"]["uid"] = json!(format!("u-{name}"));
        s
    };
    while let Some((method, path, respond)) = api.next_but_watches(&mut watches).await {
        let body = match (method.as_str(), path.as_str()) {
            ("GET", p) => first_list(p, ["a", "b", "c"].map(shoot).to_vec()),
            ("PUT", p) if p.ends_with("/binding") => {
                let name = p.trim_end_matches("/binding").rsplit('/').next().unwrap();
                let mut bound = shoot(name);
                bound["spec"]["seedName"] = json!("seed-1");
                bound["metadata"]["resourceVersion"] = json!("6");
                bound
            }
            _ => {
                events.send((format!("{method} {path}"), respond)).unwrap();
                continue;
            }
        };
        respond.send_response(ok(body));
    }
}

#[tokio::test(start_paused = true)]
async fn a_graceful_stop_sends_every_queued_event_before_exiting() {
    let (controller, api) = local_controller();
    let shared = controller.shared().clone();
    let (events_tx, mut events) = mpsc::unbounded_channel();
    tokio::spawn(three_shoots_api_server(api, events_tx));
    let (stop_tx, stop_rx) = oneshot::channel::<()>();
    let run = tokio::spawn(controller.run(async {
        let _ = stop_rx.await;
    }));
    // all three bound; their events wait for a slow API server
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(events.recv().await.unwrap());
    }
    for (e, _) in &held {
        assert_eq!(e, "POST /apis/events.k8s.io/v1/namespaces/garden-a/events");
    }
    assert_eq!(shared.reporter.outstanding(), 3);
    stop_tx.send(()).unwrap();
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert!(!run.is_finished(), "stopped with events still queued");
    for (_, respond) in held {
        respond.send_response(ok(json!({})));
        tokio::time::sleep(Duration::from_secs(1)).await;
    }
    run.await.unwrap().unwrap();
    assert_eq!(shared.reporter.outstanding(), 0, "every event was sent");
    assert!(events.try_recv().is_err(), "nothing else was written");
}

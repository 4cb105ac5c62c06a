//! The vocabulary of the mock-API-server tests: a controller over a landscape of one seed, one
//! cloud profile and one pending shoot `garden-a/s1`, and the API server's side of a test told
//! step by step (`api.returns_shoot("5", None)`, `api.refuses(409, "Conflict")`,
//! `api.accepts_failure_report()`, `api.is_quiet()`), as kube-rs's controller-rs tells its
//! verifier's scenarios. The steps are interleaved with assertions on the controller, so each
//! step waits for the scheduler's next request and answers it.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;
use std::time::Duration;

use crate::api::Shoot;
use crate::compile::load_str;
use crate::controller::Controller;
use crate::controller::attempt::Attempt;
use crate::controller::client::Connection;
use crate::controller::shared::Shared;
use crate::controller::worker::schedule_one;
use crate::fixtures::{SeedBuilder, ShootBuilder};
use http::{Request, Response};
use kube::client::Body;
use serde_json::{Value, json};
use tower_test::mock::{self, Handle, SendResponse};

pub(super) type MockHandle = Handle<Request<Body>, Response<Body>>;

/// The path of `garden-a/s1` on the API server.
pub(super) const SHOOT_PATH: &str =
    "/apis/core.gardener.cloud/v1beta1/namespaces/garden-a/shoots/s1";

/// A controller without leader election and without objects, over `client`: what a test
/// feeds through the watches.
pub(super) fn controller_without_objects(client: Connection) -> Arc<Shared> {
    let c = Controller::new(
        load_str(
            "leaderElection: {leaderElect: false}\nschedulers: {shoot: {streamingLists: false}}\n",
        )
        .unwrap(),
        client,
    )
    .unwrap();
    Arc::clone(c.shared())
}

/// A connection whose requests the returned [`ApiServer`] answers: the production client stack
/// (rate limit, lease fence, counters, deadlines) with a mock as its innermost service.
pub(super) fn mock_api() -> (Connection, ApiServer) {
    let (svc, handle) = mock::pair::<Request<Body>, Response<Body>>();
    (Connection::mock(svc), ApiServer(handle))
}

/// The API server's side of a test.
pub(super) struct ApiServer(MockHandle);

impl Deref for ApiServer {
    type Target = MockHandle;
    fn deref(&self) -> &MockHandle {
        &self.0
    }
}

impl DerefMut for ApiServer {
    fn deref_mut(&mut self) -> &mut MockHandle {
        &mut self.0
    }
}

impl ApiServer {
    /// The scheduler's next request (within 30 s), not yet answered.
    pub(super) async fn next(&mut self) -> Call {
        let (req, respond) = tokio::time::timeout(Duration::from_secs(30), self.0.next_request())
            .await
            .expect("a request within 30 s")
            .expect("the client is alive");
        let method = req.method().to_string();
        let path = req.uri().path().to_string();
        let query = req.uri().query().unwrap_or_default().to_string();
        let content_type = req
            .headers()
            .get("content-type")
            .map(|v| v.to_str().unwrap().to_string())
            .unwrap_or_default();
        let bytes = req.into_body().collect_bytes().await.unwrap();
        let body = if bytes.is_empty() {
            Value::Null
        } else {
            serde_json::from_slice(&bytes).unwrap()
        };
        Call {
            method,
            path,
            query,
            content_type,
            body,
            respond,
        }
    }

    /// Answers the next request with `garden-a/s1` at `rv`, on `seed` if given.
    pub(super) async fn returns_shoot(&mut self, rv: &str, seed: Option<&str>) {
        self.next().await.reply(server_shoot(rv, seed));
    }

    /// Answers the next request with an API error.
    pub(super) async fn refuses(&mut self, code: u16, reason: &str) {
        self.next().await.fail(code, reason);
    }

    /// Breaks the connection of the next request: the client gets no answer.
    pub(super) async fn drops_connection(&mut self) {
        self.next().await.drop_connection();
    }

    /// Answers the `SchedulingFailed` report that follows a refused bind, as upstream reports
    /// it: the event (created, or its series patched), then the `status.lastOperation` patch.
    /// Returns both request bodies.
    pub(super) async fn accepts_failure_report(&mut self) -> (Value, Value) {
        let event = self.next().await;
        assert!(
            event.path.contains("/events"),
            "{} {}",
            event.method,
            event.path
        );
        let body = event.body.clone();
        let reply = if event.method == "POST" {
            body.clone()
        } else {
            json!({})
        };
        event.reply(reply);
        let status = self.next().await;
        assert_eq!(
            (status.method.as_str(), status.path.as_str()),
            ("PATCH", format!("{SHOOT_PATH}/status").as_str())
        );
        let patch = status.body.clone();
        status.reply(server_shoot("6", None));
        (body, patch)
    }

    /// The next request, which must be a read of `garden-a/s1`; not yet answered.
    pub(super) async fn reads_shoot(&mut self) -> Call {
        let read = self.next().await;
        assert_eq!(
            (read.method.as_str(), read.path.as_str()),
            ("GET", SHOOT_PATH)
        );
        read
    }

    /// The next request, which must be sent to the binding subresource of `garden-a/s1`; not
    /// yet answered.
    pub(super) async fn binds_shoot(&mut self) -> Call {
        let put = self.next().await;
        assert_eq!(put.path, format!("{SHOOT_PATH}/binding"));
        put
    }

    /// Answers the next request, which must be the `SchedulingSuccessful` event, as created.
    pub(super) async fn accepts_success_event(&mut self) {
        let event = self.next().await;
        assert_eq!(event.body["reason"], "SchedulingSuccessful");
        event.echo();
    }

    /// The next request that is not a watch, as (method, path, responder); watches are kept
    /// open in `watches`, never answered. `None` once the client is gone.
    pub(super) async fn next_but_watches(
        &mut self,
        watches: &mut Vec<SendResponse<Response<Body>>>,
    ) -> Option<(String, String, SendResponse<Response<Body>>)> {
        while let Some((req, respond)) = self.0.next_request().await {
            if req.uri().query().unwrap_or_default().contains("watch=true") {
                watches.push(respond);
                continue;
            }
            return Some((
                req.method().to_string(),
                req.uri().path().to_string(),
                respond,
            ));
        }
        None
    }

    /// Fails the test if a request comes within 300 ms.
    pub(super) async fn is_quiet(&mut self) {
        if let Ok(Some((req, _))) =
            tokio::time::timeout(Duration::from_millis(300), self.0.next_request()).await
        {
            panic!("unexpected request {} {}", req.method(), req.uri());
        }
    }
}

/// One request of the scheduler, waiting for its answer.
pub(super) struct Call {
    pub(super) method: String,
    pub(super) path: String,
    pub(super) query: String,
    pub(super) content_type: String,
    pub(super) body: Value,
    pub(super) respond: SendResponse<Response<Body>>,
}

impl Call {
    /// Answers 200 with `body`.
    pub(super) fn reply(self, body: Value) {
        self.respond.send_response(ok(body));
    }

    /// Answers 200 with the object sent (a create).
    pub(super) fn echo(self) {
        let body = self.body.clone();
        self.reply(body);
    }

    /// Answers a `status.lastOperation` patch of `garden-a/s1`, brought back into the
    /// controller's state as the watch would bring it.
    pub(super) fn patches_status(self, shared: &Shared) {
        assert_eq!(
            (self.method.as_str(), self.path.as_str()),
            ("PATCH", format!("{SHOOT_PATH}/status").as_str())
        );
        let mut seen = observed_shoot();
        seen.status = serde_json::from_value(self.body["status"].clone()).unwrap();
        shared.lock().apply_shoot(&seen);
        self.reply(server_shoot("6", None));
    }

    /// Answers with an API error.
    pub(super) fn fail(self, code: u16, reason: &str) {
        self.respond.send_response(failure(code, reason));
    }

    /// Breaks the connection: the client gets no answer.
    pub(super) fn drop_connection(self) {
        self.respond
            .send_error(std::io::Error::other("connection reset"));
    }
}

/// A JSON response with `code`.
pub(super) fn json_response(code: u16, body: &Value) -> Response<Body> {
    Response::builder()
        .status(code)
        .header("content-type", "application/json")
        .body(Body::from(serde_json::to_vec(body).unwrap()))
        .unwrap()
}

pub(super) fn ok(body: Value) -> Response<Body> {
    json_response(200, &body)
}

/// An API error as the API server sends it (a `Status`).
pub(super) fn failure(code: u16, reason: &str) -> Response<Body> {
    let status = json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
                        "message": format!("injected {reason}"), "reason": reason, "code": code});
    json_response(code, &status)
}

/// The shoot as the server holds it: more fields than the scheduler models.
pub(super) fn server_shoot(rv: &str, seed: Option<&str>) -> Value {
    let mut v = json!({
        "apiVersion": "core.gardener.cloud/v1beta1", "kind": "Shoot",
        "metadata": {"name": "s1", "namespace": "garden-a", "uid": "u-1", "resourceVersion": rv},
        "spec": {"cloudProfileName": "aws", "region": "eu-west-1", "provider": {"type": "aws"},
                 "kubernetes": {"version": "1.33.2"}},
        "status": {"technicalID": "shoot--a--s1"}
    });
    if let Some(s) = seed {
        v["spec"]["seedName"] = json!(s);
    }
    v
}

/// `garden-a/s1` as the scheduler saw it: version 5, pending.
pub(super) fn observed_shoot() -> Shoot {
    let mut s = ShootBuilder::new("garden-a", "s1").build();
    s.metadata.resource_version = Some("5".into());
    s.metadata.uid = Some("u-1".into());
    s
}

/// A controller without leader election (`retrySyncPeriod: 7s`) over [`seed_landscape`].
pub(super) fn controller(client: Connection) -> Arc<Shared> {
    controller_from(
        client,
        "leaderElection: {leaderElect: false}\nschedulers: {shoot: {streamingLists: false, retrySyncPeriod: 7s}}\n",
    )
}

/// A controller configured by `yaml` over [`seed_landscape`].
pub(super) fn controller_from(client: Connection, yaml: &str) -> Arc<Shared> {
    let c = Controller::new(load_str(yaml).unwrap(), client).unwrap();
    let shared = Arc::clone(c.shared());
    seed_landscape(&shared);
    shared
}

/// seed-1 with room for one shoot, CloudProfile aws, pending shoot garden-a/s1 at version 5.
pub(super) fn seed_landscape(shared: &Shared) {
    let mut cache = shared.lock();
    cache.apply_seed(
        &SeedBuilder::new("seed-1")
            .allocatable("shoots", "1")
            .build(),
    );
    let mut cp = crate::api::CloudProfile::default();
    cp.metadata.name = Some("aws".into());
    cache.apply_cloud_profile(&cp);
    cache.apply_shoot(&observed_shoot());
}

/// Processes `garden-a/s1` in the background, as a worker would.
pub(super) fn spawn_attempt(shared: &Arc<Shared>) -> tokio::task::JoinHandle<Attempt> {
    let shared = shared.clone();
    tokio::spawn(async move { schedule_one(&shared, "garden-a/s1").await })
}

/// The value of a metric series (`name{labels}`) in the controller's metrics, if exported.
pub(super) fn metric(shared: &Shared, series: &str) -> Option<String> {
    let prefix = format!("{series} ");
    shared
        .metrics()
        .encode()
        .lines()
        .find_map(|l| l.strip_prefix(prefix.as_str()).map(str::to_string))
}

/// `gardener_scheduler_schedule_attempts_total` for one result of the default profile.
pub(super) fn attempts(shared: &Shared, result: &str) -> u64 {
    metric(
        shared,
        &format!(
            "gardener_scheduler_schedule_attempts_total{{result=\"{result}\",profile=\"default\"}}"
        ),
    )
    .map_or(0, |v| v.parse().unwrap())
}

/// A list of `kind` at resourceVersion `rv`, as the API server sends it.
pub(super) fn list_of(kind: &str, rv: &str, items: Vec<Value>) -> Value {
    json!({"apiVersion": "v1", "kind": format!("{kind}List"),
           "metadata": {"resourceVersion": rv}, "items": items})
}

/// The answer to a watch's first list at `path` over [`seed_landscape`]'s objects, with
/// `shoots` as the shoots: seed-1, CloudProfile aws, and no objects of the other kinds.
pub(super) fn first_list(path: &str, shoots: Vec<Value>) -> Value {
    match path {
        "/apis/core.gardener.cloud/v1beta1/shoots" => list_of("Shoot", "10", shoots),
        "/apis/core.gardener.cloud/v1beta1/seeds" => list_of(
            "Seed",
            "10",
            vec![serde_json::to_value(SeedBuilder::new("seed-1").build()).unwrap()],
        ),
        "/apis/core.gardener.cloud/v1beta1/cloudprofiles" => {
            let mut cp = crate::api::CloudProfile::default();
            cp.metadata.name = Some("aws".into());
            let mut v = serde_json::to_value(cp).unwrap();
            v["apiVersion"] = json!("core.gardener.cloud/v1beta1");
            v["kind"] = json!("CloudProfile");
            list_of("CloudProfile", "10", vec![v])
        }
        _ => list_of("Object", "10", vec![]),
    }
}

/// `garden-a/<name>` at `rv`, on `seed` if given, as the server sends it.
pub(super) fn shoot_json(name: &str, rv: &str, seed: Option<&str>) -> Value {
    let mut b = ShootBuilder::new("garden-a", name);
    if let Some(s) = seed {
        b = b.seed(s);
    }
    let mut s = b.build();
    s.metadata.resource_version = Some(rv.into());
    let mut v = serde_json::to_value(s).unwrap();
    v["apiVersion"] = json!("core.gardener.cloud/v1beta1");
    v["kind"] = json!("Shoot");
    v
}

/// A watch response carrying `events`, after which the server closes the stream.
pub(super) fn watch_events(events: &[(&str, Value)]) -> Response<Body> {
    let mut body = Vec::new();
    for (t, object) in events {
        serde_json::to_writer(&mut body, &json!({"type": t, "object": object})).unwrap();
        body.push(b'\n');
    }
    Response::builder()
        .status(200)
        .header("content-type", "application/json")
        .body(Body::from(body))
        .unwrap()
}

/// Binds [`observed_shoot`] to `seed-1` in the background, as the leader.
pub(super) fn spawn_bind(
    connection: Connection,
    mode: crate::config::BindingMode,
) -> tokio::task::JoinHandle<Result<String, crate::controller::BindError>> {
    let shoot = observed_shoot();
    let client = connection.client();
    tokio::spawn(async move {
        crate::controller::bind(
            &client,
            mode,
            &shoot,
            None,
            "seed-1",
            None,
            crate::controller::REQUEST_TIMEOUT,
            &crate::controller::Leadership::always(),
        )
        .await
    })
}

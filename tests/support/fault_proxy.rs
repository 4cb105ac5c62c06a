//! A fault proxy: plain HTTP in front of the test API server, forwarding every request, with
//! faults a test switches at run time. The faults happen on the wire, where a client meets them
//! in production: a watch whose connection stays open but goes silent, latency, 429 and 503
//! answers, watches cut mid-stream, refused binds, binds the server committed whose answer
//! is lost on the way back (an ingress answering 502), and answers that never end.
//!
//! Each scheduler gets a kubeconfig of its own ([`FaultProxy::kubeconfig_for`]) whose bearer token
//! names it, so that every request the proxy sees is recorded with the process that sent it. The
//! proxy forwards each request with the real token of the identity that name stands for (the
//! chart's scheduler ServiceAccount unless the test names another), so RBAC judges every request
//! as it would the process's own.
//! Watch bodies are streamed through chunk by chunk, never buffered (except while
//! [`Faults::watch_delay`] holds chunks back on purpose).

use std::collections::{HashMap, HashSet, VecDeque};
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body as AxumBody, Bytes};
use axum::extract::{Request, State};
use axum::response::Response;
use futures::StreamExt;
use kube::Client;
use serde_json::json;

use super::ApiServer;

/// What a request is, as the fault switches and the counters see it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Class {
    /// `PUT .../shoots/NAME/binding`
    Bind,
    LeaseGet,
    LeaseUpdate,
    LeaseCreate,
    /// a `GET` of a collection without `watch`
    List,
    /// a `GET` with `watch=true`
    Watch,
    /// anything else: reads of one object, patches, events, status
    Other,
}

impl Class {
    pub fn is_lease(self) -> bool {
        matches!(
            self,
            Class::LeaseGet | Class::LeaseUpdate | Class::LeaseCreate
        )
    }
}

/// Which requests a fault applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Target {
    All,
    Binds,
    Lists,
    Lease,
    Watches,
}

impl Target {
    fn matches(self, class: Class) -> bool {
        match self {
            Target::All => true,
            Target::Binds => class == Class::Bind,
            Target::Lists => class == Class::List,
            Target::Lease => class.is_lease(),
            Target::Watches => class == Class::Watch,
        }
    }
}

/// How a black-holed watch behaves.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Silence {
    /// the response headers (200) go out, then never a byte; the connection stays open
    AfterHeaders,
    /// the request is read and never answered, not even with headers
    NoAnswer,
}

#[derive(Clone, Debug)]
pub struct BlackHole {
    /// the resource (`shoots`, `seeds`...); `None`: every watch
    pub resource: Option<String>,
    pub silence: Silence,
    /// lists of the resource too, not only watches: its whole feed is dead
    pub lists: bool,
}

impl BlackHole {
    fn covers(&self, resource: &str) -> bool {
        self.resource.as_deref().is_none_or(|r| r == resource)
    }
}

/// Answers some requests with an error instead of forwarding them.
#[derive(Clone, Debug)]
pub struct Storm {
    /// 429 or 503
    pub status: u16,
    /// the `Retry-After` header, in seconds
    pub retry_after: Option<u32>,
    /// the same in the Status body's `details.retryAfterSeconds`, as kube-apiserver sends it
    /// (an ingress or gateway sends the header only)
    pub retry_after_in_body: bool,
    /// the share of matching requests answered so, spread evenly over each client's requests
    /// of each class (0.5: every second one)
    pub fraction: f64,
    pub targets: Vec<Target>,
}

/// What an answer that never ends looks like.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EndlessOf {
    /// a list (a `GET` of the collection) whose items never end
    List,
    /// a watch whose first event is one line that never ends
    Watch,
    /// a `GET` of one named object: an object with a string that never ends
    Object,
}

/// Answers requests of `of` on `resource` (`shoots`, `leases`...) with a body that does not end:
/// 200 and valid JSON as far as it goes, streamed as fast as the client reads it. To spare the
/// machine a client without a byte cap, the proxy ends it after [`ENDLESS_BYTES`], far past
/// every cap the scheduler has.
#[derive(Clone, Debug)]
pub struct Endless {
    pub of: EndlessOf,
    pub resource: &'static str,
}

/// Where an endless answer stops after all (see [`Endless`]).
pub const ENDLESS_BYTES: usize = 512 << 20;

impl Endless {
    fn matches(&self, method: &http::Method, class: Class, resource: &str, named: bool) -> bool {
        resource == self.resource
            && match self.of {
                EndlessOf::List => class == Class::List,
                EndlessOf::Watch => class == Class::Watch,
                EndlessOf::Object => *method == http::Method::GET && named && class != Class::Watch,
            }
    }

    /// The answer: a head that opens the JSON, then filler until [`ENDLESS_BYTES`].
    fn response(&self) -> Response {
        let kind = match self.resource {
            "leases" => "Lease",
            "shoots" => "Shoot",
            "seeds" => "Seed",
            other => other,
        };
        let api_version = match self.resource {
            "leases" => "coordination.k8s.io/v1",
            _ => "core.gardener.cloud/v1beta1",
        };
        let (head, unit) = match self.of {
            EndlessOf::List => (
                format!(
                    r#"{{"kind":"{kind}List","apiVersion":"{api_version}","metadata":{{"resourceVersion":"1"}},"items":["#
                ),
                r#"{"metadata":{"name":"endless"}},"#,
            ),
            EndlessOf::Watch => (
                format!(
                    r#"{{"type":"ADDED","object":{{"kind":"{kind}","apiVersion":"{api_version}","metadata":{{"name":""#
                ),
                "x",
            ),
            EndlessOf::Object => (
                format!(
                    r#"{{"kind":"{kind}","apiVersion":"{api_version}","metadata":{{"name":"endless","annotations":{{"a":""#
                ),
                "x",
            ),
        };
        let filler = Bytes::from(unit.repeat((64 << 10) / unit.len()));
        let chunks = (ENDLESS_BYTES - head.len()) / filler.len();
        let body = futures::stream::once(async move { Bytes::from(head) })
            .chain(futures::stream::repeat(filler).take(chunks))
            .map(Ok::<_, std::io::Error>);
        Response::builder()
            .status(200)
            .header("content-type", "application/json")
            .body(AxumBody::from_stream(body))
            .unwrap()
    }
}

/// The faults in force. Changing them affects new requests; a black hole also silences open
/// watches it covers.
#[derive(Clone, Debug, Default)]
pub struct Faults {
    /// every watch of a resource, the open ones and new ones
    pub black_hole: Option<BlackHole>,
    /// added before forwarding each matching request
    pub latency: Option<(Duration, Target)>,
    pub storm: Option<Storm>,
    /// every watch is cut (the connection aborted mid-body) this long after it started
    pub cut_watches_after: Option<Duration>,
    /// the next watch of the resource is cut once this many bytes of it have been passed on
    /// (mid-line, as a connection breaks); used up by that watch
    pub cut_next_watch_after_bytes: Option<(usize, String)>,
    /// each watch chunk of the resource (`None`: every resource) reaches the client this long
    /// after it left the server
    pub watch_delay: Option<(Duration, Option<String>)>,
    /// every bind answered 422 without forwarding
    pub refuse_binds: bool,
    /// the next this many binds are forwarded (and committed by the server), and their answer
    /// replaced by a 502
    pub lose_bind_answers: u32,
    /// requests answered with a body that does not end
    pub endless: Vec<Endless>,
}

/// One request as the proxy saw it.
#[derive(Clone, Debug)]
pub struct Seen {
    /// when it arrived
    pub at: Instant,
    /// the bearer token: the process that sent it
    pub client: String,
    pub method: http::Method,
    pub class: Class,
    /// `shoots`, `leases`, `seeds`...
    pub resource: String,
    /// the object's name, for requests about one object
    pub name: Option<String>,
    /// the status the client got; `None` while unanswered (or never, when black-holed)
    pub status: Option<u16>,
    /// the fault that shaped the answer, if any
    pub fault: Option<&'static str>,
}

struct Inner {
    /// kube-apiserver, without credentials of its own
    upstream: Client,
    /// client name -> the real token its requests are forwarded with
    tokens: Mutex<HashMap<String, String>>,
    faults: Mutex<Faults>,
    seen: Mutex<Vec<Seen>>,
    /// per (client, class): the share of a storm owed so far
    owed: Mutex<HashMap<(String, Class), f64>>,
    /// open watch streams: id -> resource
    open: Mutex<HashMap<u64, String>>,
    silenced: Mutex<HashSet<u64>>,
    /// open streams to be aborted now
    cut: Mutex<HashSet<u64>>,
    next_id: AtomicU64,
    /// bumped on every change of the faults, so open streams look again
    changed: tokio::sync::watch::Sender<u64>,
    /// watch events of type ERROR with code 410 (Gone) passed to clients, per resource
    expired: Mutex<HashMap<String, u64>>,
}

impl Inner {
    fn record(&self, seen: Seen) -> usize {
        let mut v = self.seen.lock().unwrap();
        v.push(seen);
        v.len() - 1
    }

    fn answered(&self, idx: usize, status: u16, fault: Option<&'static str>) {
        let mut v = self.seen.lock().unwrap();
        v[idx].status = Some(status);
        if fault.is_some() {
            v[idx].fault = fault;
        }
    }

    /// Whether this request of `client` and `class` is one of the `fraction` a storm answers.
    fn hit(&self, client: &str, class: Class, fraction: f64) -> bool {
        let mut owed = self.owed.lock().unwrap();
        let o = owed.entry((client.to_string(), class)).or_default();
        *o += fraction;
        if *o >= 1.0 - 1e-9 {
            *o -= 1.0;
            true
        } else {
            false
        }
    }

    fn take_lost_answer(&self) -> bool {
        let mut f = self.faults.lock().unwrap();
        if f.lose_bind_answers > 0 {
            f.lose_bind_answers -= 1;
            true
        } else {
            false
        }
    }

    fn is_silenced(&self, id: u64) -> bool {
        self.silenced.lock().unwrap().contains(&id)
    }

    fn notify(&self) {
        self.changed.send_modify(|g| *g += 1);
    }
}

pub struct FaultProxy {
    pub port: u16,
    inner: Arc<Inner>,
    state_dir: PathBuf,
    /// the chart's scheduler identity: what a client stands for unless the test says otherwise
    scheduler_identity: PathBuf,
    task: tokio::task::JoinHandle<()>,
}

impl FaultProxy {
    pub async fn start(api: &ApiServer) -> FaultProxy {
        let inner = Arc::new(Inner {
            upstream: api.passthrough_client().await,
            tokens: Mutex::default(),
            faults: Mutex::default(),
            seen: Mutex::default(),
            owed: Mutex::default(),
            open: Mutex::default(),
            silenced: Mutex::default(),
            cut: Mutex::default(),
            next_id: AtomicU64::new(0),
            changed: tokio::sync::watch::channel(0).0,
            expired: Mutex::default(),
        });
        let app = axum::Router::new()
            .fallback(handle)
            .with_state(inner.clone());
        let (port, task) = super::proxy::serve_locally(app).await;
        FaultProxy {
            port,
            inner,
            state_dir: api.state.clone(),
            scheduler_identity: api.scheduler_identity().to_path_buf(),
            task,
        }
    }

    /// A kubeconfig pointing at the proxy whose token is `client`: requests are recorded as
    /// that client's and forwarded as the chart's scheduler ServiceAccount.
    pub fn kubeconfig_for(&self, client: &str) -> PathBuf {
        let identity = self.scheduler_identity.clone();
        self.kubeconfig_as(client, &identity)
    }

    /// As [`FaultProxy::kubeconfig_for`], forwarded with the token of the kubeconfig `identity`.
    pub fn kubeconfig_as(&self, client: &str, identity: &std::path::Path) -> PathBuf {
        self.inner
            .tokens
            .lock()
            .unwrap()
            .insert(client.to_string(), super::token_of(identity));
        let path = self
            .state_dir
            .join(format!("kubeconfig-fault-proxy-{client}"));
        std::fs::write(
            &path,
            format!(
                "apiVersion: v1\nkind: Config\nclusters:\n- name: proxy\n  cluster: {{server: \"http://127.0.0.1:{}\"}}\nusers:\n- name: {client}\n  user: {{token: {client}}}\ncontexts:\n- name: proxy\n  context: {{cluster: proxy, user: {client}}}\ncurrent-context: proxy\n",
                self.port
            ),
        )
        .unwrap();
        path
    }

    /// Replaces the faults in force; a black hole also silences the open watches it covers.
    pub fn set(&self, faults: Faults) {
        if let Some(bh) = &faults.black_hole {
            self.silence(|res| bh.covers(res));
        }
        *self.inner.faults.lock().unwrap() = faults;
        self.inner.notify();
    }

    /// Changes the faults in force in place.
    pub fn update(&self, f: impl FnOnce(&mut Faults)) {
        let mut faults = self.faults();
        f(&mut faults);
        self.set(faults);
    }

    pub fn faults(&self) -> Faults {
        self.inner.faults.lock().unwrap().clone()
    }

    /// No faults from now on (silenced watches stay silent: their connections are dead).
    pub fn clear(&self) {
        self.set(Faults::default());
    }

    /// Silences the watches open now on `resource` (`None`: all), as half-open connections
    /// would be: no byte from now on, the connection held. New watches are not affected.
    /// Returns how many were silenced.
    pub fn silence_open_watches(&self, resource: Option<&str>) -> usize {
        let n = self.silence(|res| resource.is_none_or(|r| r == res));
        self.inner.notify();
        n
    }

    fn silence(&self, covers: impl Fn(&str) -> bool) -> usize {
        let open = self.inner.open.lock().unwrap();
        let mut silenced = self.inner.silenced.lock().unwrap();
        let mut n = 0;
        for (id, res) in open.iter() {
            if covers(res) && silenced.insert(*id) {
                n += 1;
            }
        }
        n
    }

    /// Aborts the watches open now on `resource` (`None`: all) mid-body, as a broken
    /// connection would. Returns how many.
    pub fn cut_open_watches(&self, resource: Option<&str>) -> usize {
        let open = self.inner.open.lock().unwrap();
        let mut cut = self.inner.cut.lock().unwrap();
        let mut n = 0;
        for (id, res) in open.iter() {
            if resource.is_none_or(|r| r == res) && cut.insert(*id) {
                n += 1;
            }
        }
        drop((open, cut));
        self.inner.notify();
        n
    }

    /// Watches being streamed now on `resource` (`None`: all), silenced ones included.
    pub fn open_watches(&self, resource: Option<&str>) -> usize {
        self.inner
            .open
            .lock()
            .unwrap()
            .values()
            .filter(|r| resource.is_none_or(|x| x == r.as_str()))
            .count()
    }

    /// Every request seen so far, in arrival order.
    pub fn requests(&self) -> Vec<Seen> {
        self.inner.seen.lock().unwrap().clone()
    }

    /// Requests of one class so far.
    pub fn count(&self, class: Class) -> usize {
        self.inner
            .seen
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.class == class)
            .count()
    }

    /// Requests answered with an endless body so far, on `resource`, of `class`.
    pub fn endless_answers(&self, class: Class, resource: &str) -> usize {
        self.inner
            .seen
            .lock()
            .unwrap()
            .iter()
            .filter(|s| s.fault == Some("endless") && s.class == class && s.resource == resource)
            .count()
    }

    /// Requests per class so far.
    pub fn counts(&self) -> std::collections::BTreeMap<Class, usize> {
        let mut m = std::collections::BTreeMap::new();
        for s in self.inner.seen.lock().unwrap().iter() {
            *m.entry(s.class).or_default() += 1;
        }
        m
    }

    /// Watch events of type ERROR with code 410 Gone that went through to a client, on
    /// `resource` (`None`: all).
    pub fn expired_watch_events(&self, resource: Option<&str>) -> u64 {
        self.inner
            .expired
            .lock()
            .unwrap()
            .iter()
            .filter(|(r, _)| resource.is_none_or(|x| x == r.as_str()))
            .map(|(_, n)| n)
            .sum()
    }
}

impl Drop for FaultProxy {
    fn drop(&mut self) {
        self.task.abort();
        // open streams end with the proxy
        let ids: Vec<u64> = self.inner.open.lock().unwrap().keys().copied().collect();
        self.inner.silenced.lock().unwrap().extend(ids);
        self.inner.notify();
    }
}

/// `(class, resource, name)` of a request.
fn classify(method: &http::Method, path: &str, query: &str) -> (Class, String, Option<String>) {
    let segs: Vec<&str> = path.trim_matches('/').split('/').collect();
    let rest: &[&str] = match segs.first() {
        Some(&"api") if segs.len() >= 2 => &segs[2..],
        Some(&"apis") if segs.len() >= 3 => &segs[3..],
        _ => return (Class::Other, String::new(), None),
    };
    let (resource, name, sub) = if rest.len() >= 3 && rest[0] == "namespaces" {
        (rest[2], rest.get(3), rest.get(4))
    } else {
        (
            rest.first().copied().unwrap_or(""),
            rest.get(1),
            rest.get(2),
        )
    };
    let name = name.map(|n| n.to_string());
    let watch = query
        .split('&')
        .any(|kv| kv == "watch=true" || kv == "watch=1");
    let class = if *method == http::Method::PUT && resource == "shoots" && sub == Some(&"binding") {
        Class::Bind
    } else if resource == "leases" {
        match *method {
            http::Method::GET if name.is_some() => Class::LeaseGet,
            http::Method::PUT => Class::LeaseUpdate,
            http::Method::POST => Class::LeaseCreate,
            _ => Class::Other,
        }
    } else if *method == http::Method::GET && watch {
        Class::Watch
    } else if *method == http::Method::GET && name.is_none() {
        Class::List
    } else {
        Class::Other
    };
    (class, resource.to_string(), name)
}

const HOP_BY_HOP: [&str; 6] = [
    "connection",
    "transfer-encoding",
    "keep-alive",
    "host",
    "authorization",
    "content-length",
];

fn status_response(
    code: u16,
    retry_after: Option<u32>,
    in_body: bool,
    reason: &str,
    message: &str,
) -> Response {
    let mut body = json!({"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
        "reason": reason, "code": code, "message": message});
    if let Some(s) = retry_after.filter(|_| in_body) {
        body["details"] = json!({"retryAfterSeconds": s});
    }
    let mut r = Response::builder()
        .status(code)
        .header("content-type", "application/json");
    if let Some(s) = retry_after {
        r = r.header("retry-after", s.to_string());
    }
    r.body(AxumBody::from(serde_json::to_vec(&body).unwrap()))
        .unwrap()
}

async fn handle(State(st): State<Arc<Inner>>, req: Request) -> Response {
    let at = Instant::now();
    let (parts, body) = req.into_parts();
    let bytes = super::proxy::body_bytes(body).await;
    let client = super::proxy::bearer_token(&parts);
    let (class, resource, name) = classify(
        &parts.method,
        parts.uri.path(),
        parts.uri.query().unwrap_or_default(),
    );
    let idx = st.record(Seen {
        at,
        client: client.clone(),
        method: parts.method.clone(),
        class,
        resource: resource.clone(),
        name: name.clone(),
        status: None,
        fault: None,
    });
    let faults = st.faults.lock().unwrap().clone();

    if let Some((d, target)) = faults.latency
        && target.matches(class)
    {
        tokio::time::sleep(d).await;
    }
    if let Some(storm) = &faults.storm
        && storm.targets.iter().any(|t| t.matches(class))
        && st.hit(&st.seen.lock().unwrap()[idx].client, class, storm.fraction)
    {
        st.answered(idx, storm.status, Some("storm"));
        let (reason, message) = match storm.status {
            429 => ("TooManyRequests", "the fault proxy throttles this request"),
            _ => (
                "ServiceUnavailable",
                "the fault proxy answers this request 503",
            ),
        };
        return status_response(
            storm.status,
            storm.retry_after,
            storm.retry_after_in_body,
            reason,
            message,
        );
    }
    if let Some(endless) = faults
        .endless
        .iter()
        .find(|e| e.matches(&parts.method, class, &resource, name.is_some()))
    {
        st.answered(idx, 200, Some("endless"));
        return endless.response();
    }
    if class == Class::Bind && faults.refuse_binds {
        st.answered(idx, 422, Some("refused"));
        return status_response(
            422,
            None,
            false,
            "Invalid",
            "admission webhook \"e2e.faults\" denied the request",
        );
    }
    let black_hole = faults.black_hole.as_ref().filter(|bh| {
        (class == Class::Watch || bh.lists && class == Class::List) && bh.covers(&resource)
    });
    if let Some(bh) = black_hole {
        match bh.silence {
            Silence::AfterHeaders => {
                st.answered(idx, 200, Some("black-hole"));
                return Response::builder()
                    .status(200)
                    .header("content-type", "application/json")
                    .body(AxumBody::from_stream(futures::stream::pending::<
                        Result<Bytes, std::io::Error>,
                    >()))
                    .unwrap();
            }
            Silence::NoAnswer => {
                st.seen.lock().unwrap()[idx].fault = Some("no-answer");
                // held until the client gives up (the connection closes) or 10 minutes
                tokio::time::sleep(Duration::from_secs(600)).await;
                return status_response(504, None, false, "Timeout", "no answer");
            }
        }
    }

    let lose = class == Class::Bind && st.take_lost_answer();
    let uri = super::proxy::path_and_query(&parts);
    let mut out = http::Request::builder().method(parts.method).uri(uri);
    for (k, v) in &parts.headers {
        if !HOP_BY_HOP.contains(&k.as_str()) {
            out = out.header(k, v);
        }
    }
    // the real token of the identity the client stands for; none for an unknown client
    let token = st.tokens.lock().unwrap().get(&client).cloned();
    if let Some(token) = token {
        out = out.header("authorization", format!("Bearer {token}"));
    }
    let out = out.body(kube::client::Body::from(bytes.to_vec())).unwrap();
    let resp = match st.upstream.send(out).await {
        Ok(resp) => resp,
        Err(e) => {
            st.answered(idx, 502, Some("upstream"));
            return Response::builder()
                .status(502)
                .body(AxumBody::from(format!("fault proxy: upstream: {e}")))
                .unwrap();
        }
    };
    let (rparts, rbody) = resp.into_parts();
    if lose {
        // the server has answered (and committed); the client learns nothing of it
        let _ = axum::body::to_bytes(AxumBody::new(rbody), 64 << 20).await;
        st.answered(idx, 502, Some("lost-answer"));
        return Response::builder()
            .status(502)
            .header("content-type", "text/plain")
            .body(AxumBody::from("502 Bad Gateway"))
            .unwrap();
    }
    st.answered(idx, rparts.status.as_u16(), None);
    let mut r = Response::builder().status(rparts.status);
    let streamed = class == Class::Watch;
    for (k, v) in &rparts.headers {
        // a body passed on as is keeps its length
        if !HOP_BY_HOP.contains(&k.as_str()) || (k == "content-length" && !streamed) {
            r = r.header(k, v);
        }
    }
    let body = if streamed && rparts.status.is_success() {
        let delay = faults
            .watch_delay
            .as_ref()
            .filter(|(_, res)| res.as_deref().is_none_or(|r| r == resource))
            .map(|(d, _)| *d);
        let cut_bytes = {
            let mut f = st.faults.lock().unwrap();
            match &f.cut_next_watch_after_bytes {
                Some((n, res)) if *res == resource => {
                    let n = *n;
                    f.cut_next_watch_after_bytes = None;
                    Some(n)
                }
                _ => None,
            }
        };
        pump(
            st,
            resource,
            rbody,
            faults.cut_watches_after,
            cut_bytes,
            delay,
        )
    } else {
        AxumBody::new(rbody)
    };
    r.body(body).unwrap()
}

/// Streams a watch body through, chunk by chunk, until the server ends it, the client goes, the
/// stream is cut, or it is silenced (then it holds the connection open, sending nothing).
fn pump(
    st: Arc<Inner>,
    resource: String,
    upstream: kube::client::Body,
    cut_after: Option<Duration>,
    cut_bytes: Option<usize>,
    delay: Option<Duration>,
) -> AxumBody {
    let id = st.next_id.fetch_add(1, Ordering::SeqCst);
    st.open.lock().unwrap().insert(id, resource.clone());
    let (tx, rx) = tokio::sync::mpsc::channel::<Result<Bytes, std::io::Error>>(16);
    tokio::spawn(async move {
        let mut data = AxumBody::new(upstream).into_data_stream();
        let mut changed = st.changed.subscribe();
        let cut = async {
            match cut_after {
                Some(d) => tokio::time::sleep(d).await,
                None => std::future::pending().await,
            }
        };
        tokio::pin!(cut);
        let mut held: VecDeque<(tokio::time::Instant, Bytes)> = VecDeque::new();
        let mut cut_left = cut_bytes;
        loop {
            if st.cut.lock().unwrap().remove(&id) {
                let _ = tx
                    .send(Err(std::io::Error::other("cut by the fault proxy")))
                    .await;
                break;
            }
            if st.is_silenced(id) {
                // a half-open connection: nothing more, the client's socket stays open
                drop(data);
                tx.closed().await;
                break;
            }
            let due = held.front().map(|(t, _)| *t);
            tokio::select! {
                chunk = data.next() => match chunk {
                    Some(Ok(b)) => {
                        if let Some(left) = cut_left.as_mut() {
                            if b.len() >= *left {
                                let _ = tx.send(Ok(b.slice(..*left))).await;
                                let _ = tx
                                    .send(Err(std::io::Error::other("cut by the fault proxy")))
                                    .await;
                                break;
                            }
                            *left -= b.len();
                        }
                        if b.windows(10).any(|w| w == b"\"code\":410") {
                            *st.expired.lock().unwrap().entry(resource.clone()).or_default() += 1;
                        }
                        match delay {
                            Some(d) => held.push_back((tokio::time::Instant::now() + d, b)),
                            None => {
                                if tx.send(Ok(b)).await.is_err() {
                                    break;
                                }
                            }
                        }
                    }
                    Some(Err(e)) => {
                        let _ = tx.send(Err(std::io::Error::other(e))).await;
                        break;
                    }
                    None => {
                        // the server ended the watch: deliver what is held, then end cleanly
                        for (t, b) in held.drain(..) {
                            tokio::time::sleep_until(t).await;
                            if tx.send(Ok(b)).await.is_err() {
                                break;
                            }
                        }
                        break;
                    }
                },
                _ = async { tokio::time::sleep_until(due.unwrap()).await }, if due.is_some() => {
                    let (_, b) = held.pop_front().unwrap();
                    if tx.send(Ok(b)).await.is_err() {
                        break;
                    }
                }
                r = changed.changed() => {
                    if r.is_err() {
                        break;
                    }
                }
                _ = &mut cut => {
                    // aborts the response mid-body: the client sees the connection fail
                    let _ = tx.send(Err(std::io::Error::other("cut by the fault proxy"))).await;
                    break;
                }
            }
        }
        st.open.lock().unwrap().remove(&id);
    });
    AxumBody::from_stream(futures::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|item| (item, rx))
    }))
}

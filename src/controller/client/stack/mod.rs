//! The API client stack: one composition of layers, built over the network in production and
//! over a mock service in tests, so the tests exercise the stack production runs.
//!
//! ```text
//! request ─► read retry ─► rate limit ─► lease fence ─► count ─► deadline ─► byte cap ─► headers, auth, URL ─► transport
//!            (GET only)    (qps, burst)  (writes only)  (rest_client_requests_total)
//! ```
//!
//! - **No hidden retries.** kube's default retry layer is not part of the stack. A plain read
//!   turned away with 429, 503 or 504 is sent again a few times after `Retry-After` (see
//!   `retry`), from the outermost layer, so every try waits for the rate limit, is counted and
//!   has its deadline. Writes are sent once; their retries are the caller's: the queue for
//!   binds (no sooner than a 429's Retry-After), the elector for lease requests. Watches start
//!   again with the watcher's jittered backoff.
//! - **Nothing waits forever.** Every request answers, its body included, within the deadline;
//!   a watch is cut when silent for [`WATCH_SILENCE`] (see `deadline`). Connections use TCP
//!   keepalive, so a peer that vanished without a FIN is noticed by the kernel as well.
//! - **Nothing grows without bound.** Every answer is counted as it arrives and fails once it
//!   passes its cap: 64 MiB per list page, 8 MiB per watch event and per object (see `cap`).
//! - **Fenced writes** (see `fence`): checked when sent, after the rate-limit wait.
//! - Lease requests have a client of their own with its own limiter and no fence, so a burst
//!   of binds never delays the renewal that keeps the lease.

mod body;
mod cap;
mod deadline;
mod fence;
mod retry;
mod token_file;

use std::sync::Arc;
use std::time::Duration;

use crate::controller::client::ratelimit;
use crate::controller::leader::Leadership;
use crate::controller::metrics::rest::RestClientMetrics;
use http::{Request, Response};
use http_body_util::BodyExt;
use kube::Client;
use kube::client::{Body, ConfigExt};
use tower::util::BoxCloneService;
use tower::{BoxError, Layer, ServiceBuilder, ServiceExt};

pub use body::{BoxBody, in_chain};
#[cfg(test)]
pub use cap::Answer;
pub use cap::{LIST_PAGE_BYTES, OBJECT_BYTES, TooLarge, WATCH_EVENT_BYTES};
pub use deadline::{Abandoned, Activity, REQUEST_TIMEOUT, WATCH_SILENCE, WATCH_TIMEOUT};
pub use fence::Fenced;

/// The innermost service: what sends a request and returns the answer.
pub type Transport = BoxCloneService<Request<Body>, Response<BoxBody>, BoxError>;

/// Makes a fresh transport for each client of a set.
pub type MakeTransport = Arc<dyn Fn() -> Transport + Send + Sync>;

/// TCP keepalive on every connection: first probe after this idle time, then every
/// [`KEEPALIVE_INTERVAL`], [`KEEPALIVE_RETRIES`] times.
pub const KEEPALIVE_IDLE: Duration = Duration::from_secs(30);
pub const KEEPALIVE_INTERVAL: Duration = Duration::from_secs(10);
pub const KEEPALIVE_RETRIES: u32 = 3;

/// What one client of the set is for, and what its stack carries.
pub struct Layers<'a> {
    /// `clientConnection.qps` and `burst` (0 qps: no limit), a bucket of this client's own
    pub qps: f32,
    pub burst: i32,
    /// the lease writes are fenced by; `Leadership::always()` for none
    pub fence: Leadership,
    /// each request is counted in every one of these
    pub counters: &'a [&'a RestClientMetrics],
    /// `host[:port]` for the counters' labels
    pub host: &'a str,
    /// the limit of one request
    pub limit: Duration,
    pub activity: Arc<Activity>,
    /// send plain reads turned away with 429/503/504 again (not for the Lease, whose elector
    /// retries within its own deadline); either way a `Retry-After` header is carried into the
    /// answer's `details.retryAfterSeconds`
    pub retry_reads: bool,
}

/// A client over `transport` with the whole stack.
pub fn client(transport: Transport, layers: Layers<'_>, default_namespace: &str) -> Client {
    let deadline = deadline::DeadlineLayer {
        limit: layers.limit,
        silence: WATCH_SILENCE,
        activity: layers.activity,
    };
    let capped = cap::CapLayer(cap::Caps::default()).layer(transport);
    let mut svc: Transport = BoxCloneService::new(deadline.layer(capped));
    for counter in layers.counters {
        svc = BoxCloneService::new(counter.layer(layers.host).layer(svc));
    }
    svc = BoxCloneService::new(fence::FenceLayer(layers.fence).layer(svc));
    if let Some(bucket) = ratelimit::TokenBucket::new(layers.qps, layers.burst) {
        svc = BoxCloneService::new(ratelimit::RateLimitLayer(bucket).layer(svc));
    }
    svc = BoxCloneService::new(
        retry::ReadRetryLayer {
            retry_reads: layers.retry_reads,
        }
        .layer(svc),
    );
    Client::new(svc, default_namespace)
}

/// The transport to the cluster of `config`: TLS and authentication as the kubeconfig says,
/// TCP keepalive, and kube's per-connection timeouts; no retry layer.
pub fn network(config: &kube::Config) -> Result<MakeTransport, kube::Error> {
    if let Some(proxy) = &config.proxy_url {
        return Err(kube::Error::ProxyProtocolUnsupported {
            proxy_url: Box::new(proxy.clone()),
        });
    }
    let mut http = hyper_util::client::legacy::connect::HttpConnector::new();
    http.enforce_http(false);
    http.set_nodelay(true);
    http.set_connect_timeout(config.connect_timeout);
    http.set_keepalive(Some(KEEPALIVE_IDLE));
    http.set_keepalive_interval(Some(KEEPALIVE_INTERVAL));
    http.set_keepalive_retries(Some(KEEPALIVE_RETRIES));
    let https = config.rustls_https_connector_with_connector(http)?;
    let pool: hyper_util::client::legacy::Client<_, Body> =
        hyper_util::client::legacy::Client::builder(hyper_util::rt::TokioExecutor::new())
            .build(https);
    let mut config = config.clone();
    // A token file is ours to read (trimmed, read again while running); an inline token takes
    // precedence over it, as in kube and client-go.
    let token_file = match config.auth_info.token_file.take() {
        Some(path) if config.auth_info.token.is_none() => Some(
            token_file::TokenFileLayer::new(path).map_err(|e| kube::Error::Service(Box::new(e)))?,
        ),
        _ => None,
    };
    // Fail now, not on the first request, when the credentials cannot be set up.
    config.auth_layer()?;
    config.extra_headers_layer()?;
    Ok(Arc::new(move || {
        let auth = config
            .auth_layer()
            .expect("checked when the transport was made");
        let headers = config
            .extra_headers_layer()
            .expect("checked when the transport was made");
        let svc = ServiceBuilder::new()
            .layer(config.base_uri_layer())
            .option_layer(auth)
            .layer(headers)
            .option_layer(token_file.clone())
            .map_err(BoxError::from)
            .service(pool.clone())
            .map_response(|r: Response<hyper::body::Incoming>| {
                r.map(|b| Box::new(b.map_err(BoxError::from)) as BoxBody)
            });
        BoxCloneService::new(svc)
    }))
}

/// A transport over any service: a mock in tests.
#[cfg(any(test, feature = "test-util"))]
pub fn over<S, B>(service: S) -> MakeTransport
where
    S: tower::Service<Request<Body>, Response = Response<B>> + Clone + Send + Sync + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body<Data = bytes::Bytes> + Send + Unpin + 'static,
    B::Error: Into<BoxError>,
{
    Arc::new(move || {
        let svc = service
            .clone()
            .map_response(|r: Response<B>| r.map(|b| Box::new(b.map_err(Into::into)) as BoxBody))
            .map_err(Into::into);
        BoxCloneService::new(svc)
    })
}

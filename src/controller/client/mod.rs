//! The API clients: kubeconfig or in-cluster configuration, and the clients of the scheduler
//! process, each over the one stack of `stack` (rate limit, lease fence, request counting,
//! deadlines).

pub(in crate::controller) mod bind;
pub(in crate::controller) mod brief;
pub(in crate::controller) mod decode;
pub mod permissions;
pub(in crate::controller) mod ratelimit;
pub(in crate::controller) mod redact;
pub(in crate::controller) mod stack;

use std::sync::Arc;
use std::time::Duration;

use crate::config::ClientConnection;
use crate::controller::client::stack::REQUEST_TIMEOUT;
use crate::controller::error::ControllerError;
use crate::controller::leader::Leadership;
use crate::controller::metrics::Metrics;
use crate::controller::metrics::rest::RestClientMetrics;
use kube::Client;
use stack::{Activity, Layers, MakeTransport};
use tracing::info;

/// Builds an API client for the offline commands: `kubeconfig` (a path, or a `:`-separated
/// list merged as kubectl merges `$KUBECONFIG`), else in-cluster config, else
/// `~/.kube/config`; requests are limited to `qps` with `burst` (0 qps: no limit), each
/// answers within [`REQUEST_TIMEOUT`], and every request is counted in `requests`.
pub async fn client_from_kubeconfig(
    kubeconfig: &str,
    qps: f32,
    burst: i32,
    requests: &RestClientMetrics,
) -> Result<Client, ControllerError> {
    let config = load_config(kubeconfig).await?;
    client_from_config(&config, qps, burst, requests, REQUEST_TIMEOUT)
}

/// [`client_from_kubeconfig`] for a configuration already loaded (and adjusted), each request
/// answering within `limit`.
pub fn client_from_config(
    config: &kube::Config,
    qps: f32,
    burst: i32,
    requests: &RestClientMetrics,
    limit: Duration,
) -> Result<Client, ControllerError> {
    let connection = Connection::to(config)?;
    Ok(connection.client_with(Layers {
        qps,
        burst,
        fence: Leadership::always(),
        counters: &[requests],
        host: connection.host(),
        limit,
        activity: Arc::default(),
        retry_reads: true,
    }))
}

/// Where the clients send their requests: a cluster (or, in tests, a mock behind the same
/// stack), or one ready-made client used as it is.
#[derive(Clone)]
pub enum Connection {
    Transport(TransportTo),
    Client(Client),
}

#[derive(Clone)]
pub struct TransportTo {
    make: MakeTransport,
    default_namespace: String,
    host: String,
}

impl From<Client> for Connection {
    fn from(c: Client) -> Self {
        Connection::Client(c)
    }
}

impl Connection {
    /// `host[:port]` of the cluster URL, for the request counters.
    pub fn host(&self) -> &str {
        match self {
            Connection::Transport(t) => &t.host,
            Connection::Client(_) => "",
        }
    }

    /// The cluster of `config`, over the network.
    pub fn to(config: &kube::Config) -> Result<Connection, ControllerError> {
        let make = stack::network(config)
            .map_err(|e| ControllerError::BuildClient(redact::without_content(&e.to_string())))?;
        let host = config
            .cluster_url
            .authority()
            .map_or_else(|| "none".to_string(), |a| a.to_string());
        Ok(Connection::Transport(TransportTo {
            make,
            default_namespace: config.default_namespace.clone(),
            host,
        }))
    }

    /// A service standing in for the network (a mock), behind the production stack: only the
    /// innermost service differs from production.
    #[cfg(any(test, feature = "test-util"))]
    pub fn mock<S, B>(service: S) -> Connection
    where
        S: tower::Service<http::Request<kube::client::Body>, Response = http::Response<B>>
            + Clone
            + Send
            + Sync
            + 'static,
        S::Future: Send + 'static,
        S::Error: Into<tower::BoxError>,
        B: http_body::Body<Data = bytes::Bytes> + Send + Unpin + 'static,
        B::Error: Into<tower::BoxError>,
    {
        Connection::Transport(TransportTo {
            make: stack::over(service),
            default_namespace: "default".into(),
            host: "mock".into(),
        })
    }

    /// A client with the given layers.
    pub fn client_with(&self, layers: Layers<'_>) -> Client {
        match self {
            Connection::Client(c) => c.clone(),
            Connection::Transport(t) => stack::client((t.make)(), layers, &t.default_namespace),
        }
    }

    /// A client without limit or fence, counting nowhere (tests).
    pub fn client(&self) -> Client {
        self.client_with(Layers {
            qps: 0.0,
            burst: 0,
            fence: Leadership::always(),
            counters: &[],
            host: self.host(),
            limit: REQUEST_TIMEOUT,
            activity: Arc::default(),
            retry_reads: true,
        })
    }
}

/// The scheduler process's clients, each with a rate limit of its own (`clientConnection`).
pub struct ApiClients {
    /// reads and binds; writes fenced by the lease
    pub main: Client,
    /// lists and watches, with a limit of their own: a list is never throttled behind a burst
    /// of binds, nor binds behind a list's pages
    pub watches: Client,
    /// events and `status.lastOperation`, fenced (as upstream's event recorder has its own
    /// client: reports never take the binds' share of the limit)
    pub report: Client,
    /// the Lease: not fenced, never waiting behind binds (as controller-runtime gives leader
    /// election a client of its own); made where the elector runs
    pub lease: LeaseClient,
    /// when each watched collection last answered
    pub activity: Arc<Activity>,
}

impl ApiClients {
    pub fn new(
        connection: &Connection,
        cc: &ClientConnection,
        fence: &Leadership,
        metrics: &Metrics,
        limit: Duration,
    ) -> ApiClients {
        let activity = Arc::new(Activity::default());
        let layers = |counters| Layers {
            qps: cc.qps,
            burst: cc.burst,
            fence: fence.clone(),
            counters,
            host: connection.host(),
            limit,
            activity: activity.clone(),
            retry_reads: true,
        };
        let requests = [&metrics.runtime.rest_client];
        let reports = [&metrics.runtime.rest_client, &metrics.event_client];
        let main = connection.client_with(layers(&requests));
        let watches = connection.client_with(layers(&requests));
        let report = connection.client_with(layers(&reports));
        let lease = LeaseClient {
            connection: connection.clone(),
            qps: cc.qps,
            burst: cc.burst,
            requests: metrics.runtime.rest_client.clone(),
            limit,
            activity: activity.clone(),
        };
        ApiClients {
            main,
            watches,
            report,
            lease,
            activity,
        }
    }
}

/// How the Lease's client is made. A client's requests pass through a task of the runtime it
/// was made on, so the elector makes its client on the thread it runs on (see `lifecycle`):
/// work that keeps the scheduling runtime busy cannot hold up a renewal.
#[derive(Clone)]
pub struct LeaseClient {
    connection: Connection,
    qps: f32,
    burst: i32,
    requests: RestClientMetrics,
    limit: Duration,
    activity: Arc<Activity>,
}

impl LeaseClient {
    /// The client, its task on the current runtime.
    pub fn build(&self) -> Client {
        self.connection.client_with(Layers {
            qps: self.qps,
            burst: self.burst,
            fence: Leadership::always(),
            counters: &[&self.requests],
            host: self.connection.host(),
            limit: self.limit,
            activity: self.activity.clone(),
            retry_reads: false,
        })
    }
}

/// The client configuration: `kubeconfig` (a path, or a `:`-separated list merged as kubectl
/// merges `$KUBECONFIG`), else in-cluster config, else `~/.kube/config`.
pub async fn load_config(kubeconfig: &str) -> Result<kube::Config, ControllerError> {
    // The path is logged, never the file's content: it holds credentials.
    if kubeconfig.is_empty() {
        info!("API client: in-cluster configuration, else ~/.kube/config");
    } else {
        info!(kubeconfig, "API client: kubeconfig");
    }
    let config = if kubeconfig.is_empty() {
        kube::Config::infer()
            .await
            .map_err(|e| ControllerError::BuildClient(redact::without_content(&e.to_string())))?
    } else {
        let mut merged = kube::config::Kubeconfig::default();
        for path in std::env::split_paths(kubeconfig).filter(|p| !p.as_os_str().is_empty()) {
            let kc = kube::config::Kubeconfig::read_from(&path).map_err(|e| {
                ControllerError::LoadKubeconfig {
                    path: path.display().to_string(),
                    message: redact::without_content(&e.to_string()),
                }
            })?;
            merged = merged
                .merge(kc)
                .map_err(|e| ControllerError::LoadKubeconfig {
                    path: kubeconfig.to_string(),
                    message: redact::without_content(&e.to_string()),
                })?;
        }
        kube::Config::from_custom_kubeconfig(merged, &Default::default())
            .await
            .map_err(|e| ControllerError::LoadKubeconfig {
                path: kubeconfig.to_string(),
                message: redact::without_content(&e.to_string()),
            })?
    };
    // where every request goes: an unreachable server is reported per request without it
    info!(server = %config.cluster_url, "API server");
    Ok(config)
}

//! The scheduler process: watches feed the cache, workers take shoots from the queue, decide with
//! [`crate::schedule::decide_within`] (the decision's fast mode, within its budget), bind, and
//! report.
//!
//! ```text
//! watch.rs ─► cache/ ─► queue.rs ─► worker.rs ─► attempt.rs ─► bind.rs ─► report/
//!            (Snapshot,    ▲                     decide+assume  (leader only)
//!             assumptions) │                     (one lock)
//!                          └── requeue.rs: the one Requeue each attempt returns
//! ```
//!
//! A decision and the assumption of its placement happen under one lock, so concurrent workers
//! never both count on a seed's last free slot; binds run outside the lock. An assumed placement
//! counts in usage until the watch shows the shoot bound, is dropped when the bind fails, and
//! survives stale watch events of the pre-bind version.
//!
//! An attempt returns one `Requeue` for its key, which the worker applies to the queue in
//! one place (as kube-runtime's reconcilers return an `Action`).
//!
//! The rest, by concern: `client.rs` builds the API clients, `incoming.rs` decodes what the
//! watches deliver, `shared.rs` holds what the watches, workers and HTTP handlers share (with the
//! sync bookkeeping in `sync.rs`), `lifecycle.rs` starts and stops everything. `permissions.rs` is
//! the permission each request needs, which the binds and `simulate --live` name their rows of.

mod attempt;
mod bind;
mod brief;
mod cache;
mod carbon_metrics;
mod client;
mod control;
mod evacuation_metrics;
mod incoming;
mod leader;
mod lifecycle;
mod list_page;
mod listing;
mod liveness;
mod metrics;
pub mod permissions;
mod queue;
mod ratelimit;
mod redact;
mod refusals;
mod report;
mod requeue;
mod rest_metrics;
mod runtime_metrics;
mod server;
mod shared;
mod stack;
mod stream_limits;
mod sync;
#[cfg(test)]
mod tests;
mod watch;
mod watch_lines;
mod worker;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::Notify;

pub use bind::{BindError, FIELD_MANAGER, bind, binding_object, raw_shoots, read_shoot};
pub use brief::brief;
pub use cache::{Assumption, Cache, Change, OtherUpdate, Waiting, WatchedKind};
pub use carbon_metrics::CarbonMetrics;
pub use client::{ApiClients, Connection, client_from_config, client_from_kubeconfig, load_config};
pub use evacuation_metrics::EvacuationMetrics;
pub use incoming::decode;
pub use leader::{Elector, Leadership, LeaseError, default_identity};
pub use lifecycle::LONGEST_STOP;
pub use lifecycle::shutdown_signal;
pub use metrics::{AttemptResult, Metrics};
pub use queue::{BackoffPolicy, Queue};
pub use report::{
    REASON_DEFERRED, REASON_FAILED, REASON_GATED, REASON_SCHEDULED, REPORTING_CONTROLLER,
    ReportError, Reporter, failure_description,
};
pub use rest_metrics::RestClientMetrics;
pub use runtime_metrics::{CONTROLLER, ReconcileResult};
pub use stack::{LIST_PAGE_BYTES, OBJECT_BYTES, TooLarge, WATCH_EVENT_BYTES, in_chain};

// Single-step access for this crate's tests, e2e tests and benches (the `test-util` feature).
#[cfg(any(test, feature = "test-util"))]
pub use attempt::Attempt;
#[cfg(any(test, feature = "test-util"))]
pub use cache::{PendingShoot, Sent, ShootUpdate};
#[cfg(any(test, feature = "test-util"))]
pub use incoming::WatchedShoot;
#[cfg(any(test, feature = "test-util"))]
pub use shared::Shared;
#[cfg(not(any(test, feature = "test-util")))]
use shared::Shared;
#[cfg(any(test, feature = "test-util"))]
pub use watch_lines::Wire;
#[cfg(any(test, feature = "test-util"))]
pub use worker::schedule_one;

use crate::compile::Compiled;
use crate::config::{self, ConfigError, SchedulerConfiguration};

/// Limit for one API request made while scheduling (reads, binds, events, status).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);

#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    #[error("loading kubeconfig {path}: {message}")]
    LoadKubeconfig { path: String, message: String },
    #[error("building the API client: {0}")]
    BuildClient(String),
    #[error("listening on {address} ({what}): {source}")]
    Listen {
        what: &'static str,
        address: std::net::SocketAddr,
        source: std::io::Error,
    },
    #[error(transparent)]
    LoadConfig(#[from] ConfigError),
}

/// The scheduler: construct with [`Controller::new`], then [`Controller::run`].
pub struct Controller {
    shared: Arc<Shared>,
    cfg: Arc<SchedulerConfiguration>,
    elector: Option<ElectorPlan>,
}

/// What the elector is made of once it runs: its client is made on the control thread (see
/// `lifecycle`).
struct ElectorPlan {
    lease: client::LeaseClient,
    identity: String,
    tx: tokio::sync::watch::Sender<Option<tokio::time::Instant>>,
}

impl ElectorPlan {
    /// The elector, its client's task on the current runtime.
    fn build(self, cfg: &config::LeaderElection) -> Elector {
        Elector::reporting_to(self.lease.build(), cfg, self.identity, self.tx)
    }
}

impl Controller {
    /// A scheduler for a compiled configuration ([`crate::compile`]).
    ///
    /// `connection` is a cluster (or a mock standing in for the network), over which the
    /// process builds its clients ([`ApiClients`]: the main one, one for reports, one for the
    /// Lease, each with its own `clientConnection` limit, writes fenced by the lease), or one
    /// ready-made client used for everything as it is.
    pub fn new(
        compiled: Compiled,
        connection: impl Into<Connection>,
    ) -> Result<Controller, ControllerError> {
        Controller::with_metrics(compiled, connection, Metrics::new())
    }

    /// As [`Controller::new`], reporting to `metrics`.
    pub fn with_metrics(
        compiled: Compiled,
        connection: impl Into<Connection>,
        metrics: Metrics,
    ) -> Result<Controller, ControllerError> {
        let Compiled {
            config: cfg, chain, ..
        } = compiled;
        let shoot_cfg = &cfg.schedulers.shoot;
        // What the profiles declare they read decides what is watched besides the fixed kinds.
        let carbon = chain.carbon_settings();
        let identity = default_identity();
        let (lease_tx, leadership) = if cfg.leader_election.leader_elect {
            let (tx, l) = Leadership::elected(&cfg.leader_election);
            (Some(tx), l)
        } else {
            (None, Leadership::always())
        };
        let clients = ApiClients::new(
            &connection.into(),
            &cfg.client_connection,
            &leadership,
            &metrics,
            REQUEST_TIMEOUT,
        );
        let elector = lease_tx.map(|tx| ElectorPlan {
            lease: clients.lease.clone(),
            identity: identity.clone(),
            tx,
        });
        let client = clients.main;
        let mut state = Cache::new(shoot_cfg.scheduler_names.clone());
        state
            .snapshot
            .set_regions(crate::regions::Regions::with_overrides(&shoot_cfg.regions));
        if elector.is_none() {
            metrics.leader.set(1);
        } else {
            // as client-go's elector reports on creation
            metrics
                .runtime
                .set_leader(&cfg.leader_election.resource_name, false);
        }
        let workqueue = metrics.runtime.workqueue.clone();
        let shared = Arc::new(Shared {
            // With upstream's keys alone the success note is upstream's, word for word.
            reporter: Reporter::new(
                clients.report,
                identity,
                REQUEST_TIMEOUT,
                report::QUEUE_CAPACITY,
                metrics.events_dropped.clone(),
                metrics.events_queued.clone(),
            )
            .with_score_notes(shoot_cfg.priorities.is_some() || shoot_cfg.profiles.is_some()),
            client,
            watches: clients.watches,
            activity: clients.activity,
            feeds: Mutex::default(),
            relisting: Mutex::default(),
            chain,
            name_profiles: shoot_cfg.profiles.is_some(),
            active_profile: Mutex::default(),
            binding_mode: shoot_cfg.binding_mode,
            scheduler_names: shoot_cfg.scheduler_names.clone(),
            retry_sync_period: shoot_cfg.retry_sync_period,
            decision_budget: shoot_cfg.decision_budget,
            decision_record: shoot_cfg.decision_record,
            list_page_size: shoot_cfg.list_page_size,
            streaming_lists: shoot_cfg.streaming_lists,
            heartbeat: liveness::Heartbeat::new(shoot_cfg.decision_budget),
            cache: Mutex::new(state),
            queue: Queue::with_metrics(
                BackoffPolicy {
                    initial: shoot_cfg.backoff.initial,
                    max: shoot_cfg.backoff.max,
                },
                workqueue,
            ),
            metrics,
            refusals: refusals::Refusals::default(),
            unsettled: Mutex::default(),
            leadership,
            synced: Mutex::default(),
            synced_notify: Notify::new(),
            carbon,
        });
        Ok(Controller {
            shared,
            cfg: Arc::new(cfg),
            elector,
        })
    }
}

impl Controller {
    /// The shared state, for tests that drive single steps.
    #[cfg(any(test, feature = "test-util"))]
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

/// What a task that runs beside the scheduler, in the same process, is given: the scheduler's
/// client (its writes fenced by the lease, as binds are), its leadership, the gauges it sets,
/// the profile chain and the configuration. The seed-evacuation loop is such a task.
pub struct Beside {
    pub client: kube::Client,
    pub leadership: Leadership,
    pub metrics: EvacuationMetrics,
    pub chain: Arc<crate::chain::ProfileChain>,
    pub config: Arc<SchedulerConfiguration>,
}

impl Controller {
    /// The parts a task beside the scheduler runs with.
    pub fn beside(&self) -> Beside {
        Beside {
            client: self.shared.client.clone(),
            leadership: self.shared.leadership.clone(),
            metrics: self.shared.metrics.evacuation.clone(),
            chain: self.shared.chain.clone(),
            config: self.cfg.clone(),
        }
    }
}

/// A task started beside the scheduler, if the configuration asks for one; stopped when the
/// scheduler stops.
pub type BesideTask = Box<dyn FnOnce(Beside) -> Option<futures::future::BoxFuture<'static, ()>>>;

/// Runs the scheduler for a compiled configuration until SIGTERM or SIGINT, with the task
/// `beside` makes running next to it.
pub async fn run_with_signals(
    compiled: Compiled,
    beside: BesideTask,
) -> Result<(), ControllerError> {
    let config = client::load_config(&compiled.config.client_connection.kubeconfig).await?;
    let connection = Connection::to(&config)?;
    let controller = Controller::with_metrics(compiled, connection, Metrics::new())?;
    let task = beside(controller.beside()).map(tokio::spawn);
    let result = controller.run(shutdown_signal()).await;
    if let Some(task) = task {
        task.abort();
    }
    result
}

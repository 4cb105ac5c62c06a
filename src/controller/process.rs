//! The scheduler as a value: [`Controller`], made from a compiled configuration and a
//! connection, and what a task running beside it is given ([`Beside`]). `lifecycle.rs` runs it.

use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

use crate::compile::Compiled;
use crate::config::SchedulerConfiguration;
use crate::controller::cache::Cache;
use crate::controller::client::stack::REQUEST_TIMEOUT;
use crate::controller::client::{ApiClients, Connection};
use crate::controller::control::ElectorPlan;
use crate::controller::error::ControllerError;
use crate::controller::events::{self, Reporter};
use crate::controller::leader::{Leadership, default_identity};
use crate::controller::liveness;
use crate::controller::metrics::Metrics;
use crate::controller::metrics::evacuation::EvacuationMetrics;
use crate::controller::queue::{BackoffPolicy, Queue};
use crate::controller::shared::Shared;

/// The scheduler: construct with [`Controller::new`], then [`Controller::run`].
pub struct Controller {
    pub(super) shared: Arc<Shared>,
    pub(super) cfg: Arc<SchedulerConfiguration>,
    pub(super) elector: Option<ElectorPlan>,
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
                events::QUEUE_CAPACITY,
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
            refusals: events::refusals::Refusals::default(),
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

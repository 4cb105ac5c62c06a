//! The scheduler process: watches feed the cache, workers take shoots from the queue, decide with
//! [`crate::schedule::decide`], bind, and report.
//!
//! ```text
//! watch.rs ─► state.rs (Snapshot + assumptions) ─► queue.rs ─► worker: decide+assume ─► bind.rs ─► report.rs
//!                                                                 (one lock)          (leader only)
//! ```
//!
//! A decision and the assumption of its placement happen under one lock, so concurrent workers
//! never both count on a seed's last free slot; binds run outside the lock. An assumed placement
//! counts in usage until the watch shows the shoot bound, is dropped when the bind fails, and
//! survives stale watch events of the pre-bind version.

mod bind;
mod carbon_metrics;
mod leader;
mod metrics;
mod queue;
mod ratelimit;
mod redact;
mod refusals;
mod report;
mod rest_metrics;
mod runtime_metrics;
mod server;
mod state;
#[cfg(test)]
mod tests;
mod watch;

use std::collections::HashSet;
use std::future::Future;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use chrono::Utc;
use kube::Client;
use tokio::sync::{Notify, watch as chan};
use tokio::time::Instant;
use tracing::{Instrument, debug, error, info, info_span, warn};

pub use bind::{BindError, FIELD_MANAGER, bind};
pub use carbon_metrics::CarbonMetrics;
pub use leader::{Elector, Leadership, LeaseError, default_identity};
pub use metrics::{AttemptResult, Metrics};
pub use queue::{BackoffPolicy, Queue};
pub use report::{
    REASON_DEFERRED, REASON_FAILED, REASON_SCHEDULED, REPORTING_CONTROLLER, ReportError, Reporter,
    failure_description,
};
pub use rest_metrics::RestClientMetrics;
pub use runtime_metrics::{CONTROLLER, ReconcileResult};
pub use state::{Assumption, Change, Kind, State};
pub use watch::decode;

use crate::api::Shoot;
use crate::chain::{ProfileChain, Selection};
use crate::compile::Compiled;
use crate::config::{BindingMode, ConfigError, SchedulerConfiguration};
use crate::schedule::decide;

/// Limit for one API request made while scheduling (reads, binds, events, status).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(20);
/// How long a shutdown waits for in-flight binds and then the queued reports, together.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);
/// The least a shutdown leaves for sending queued reports after slow binds.
const MIN_REPORT_DRAIN: Duration = Duration::from_secs(5);

#[derive(Debug, thiserror::Error)]
pub enum ControllerError {
    #[error("loading kubeconfig {path}: {message}")]
    LoadKubeconfig { path: String, message: String },
    #[error("building the API client: {0}")]
    BuildClient(String),
    #[error("invalid config:\n{}", .0.iter().map(|e| format!("  {e}")).collect::<Vec<_>>().join("\n"))]
    BuildProfile(Vec<crate::config::FieldError>),
    #[error("listening on {address} ({what}): {source}")]
    Listen {
        what: &'static str,
        address: std::net::SocketAddr,
        source: std::io::Error,
    },
    #[error(transparent)]
    LoadConfig(#[from] ConfigError),
}

/// Builds the API client: `kubeconfig` (a path, or a `:`-separated list merged as kubectl
/// merges `$KUBECONFIG`), else in-cluster config, else `~/.kube/config`; requests are limited to
/// `qps` with `burst` (0 qps: no limit); every request is counted in `requests`.
pub async fn client_from_kubeconfig(
    kubeconfig: &str,
    qps: f32,
    burst: i32,
    requests: &RestClientMetrics,
) -> Result<Client, ControllerError> {
    build_client(kubeconfig, qps, burst, &[requests]).await
}

/// As [`client_from_kubeconfig`], counting every request in each of `counters`.
async fn build_client(
    kubeconfig: &str,
    qps: f32,
    burst: i32,
    counters: &[&RestClientMetrics],
) -> Result<Client, ControllerError> {
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
    let host = config
        .cluster_url
        .authority()
        .map_or_else(|| "none".to_string(), |a| a.to_string());
    let builder = kube::client::ClientBuilder::try_from(config)
        .map_err(|e| ControllerError::BuildClient(redact::without_content(&e.to_string())))?;
    let bucket = ratelimit::TokenBucket::new(qps, burst);
    let builder = builder.with_layer(&counters[0].layer(&host));
    Ok(match (counters.get(1), bucket) {
        (None, None) => builder.build(),
        (None, Some(bucket)) => builder
            .with_layer(&ratelimit::RateLimitLayer(bucket))
            .build(),
        (Some(also), None) => builder.with_layer(&also.layer(&host)).build(),
        (Some(also), Some(bucket)) => builder
            .with_layer(&also.layer(&host))
            .with_layer(&ratelimit::RateLimitLayer(bucket))
            .build(),
    })
}

/// State shared by the watches, workers and HTTP handlers.
pub struct Shared {
    client: Client,
    chain: Arc<ProfileChain>,
    /// `profiles` is configured: success events name the entry that placed the shoot
    name_profiles: bool,
    /// the chain entry seen by the last decision, to log when it changes
    active_profile: Mutex<Option<String>>,
    binding_mode: BindingMode,
    retry_sync_period: Duration,
    state: Mutex<State>,
    queue: Queue,
    metrics: Metrics,
    /// binds refused the same way for every shoot, reported once
    refusals: refusals::Refusals,
    reporter: Reporter,
    leadership: Leadership,
    synced: Mutex<HashSet<Kind>>,
    synced_notify: Notify,
    /// The first `CarbonIntensity` configuration in the profile chain, if any: it decides
    /// whether carbon-intensity ConfigMaps are watched and feeds the carbon metrics.
    carbon: Option<crate::carbon::CarbonSettings>,
}

impl Shared {
    /// The cache, locked. Hold it only for synchronous work.
    #[doc(hidden)]
    pub fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn is_synced(&self, kind: Kind) -> bool {
        self.synced
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(&kind)
    }

    fn mark_synced(&self, kind: Kind) {
        self.synced
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(kind);
        self.synced_notify.notify_waiters();
    }

    /// Logs at info level when the chain's active entry differs from the last decision's.
    fn note_active_profile(&self, entry: Option<&str>) {
        let mut last = self
            .active_profile
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if last.as_deref() != entry {
            info!(
                from = last.as_deref().unwrap_or("none"),
                to = entry.unwrap_or("none"),
                "active scheduling profile changed"
            );
            *last = entry.map(str::to_string);
        }
    }

    /// Kinds whose first list has not completed.
    fn unsynced(&self) -> Vec<&'static str> {
        let synced = self.synced.lock().unwrap_or_else(|e| e.into_inner());
        Kind::ALL
            .iter()
            .filter(|k| !synced.contains(k))
            .map(Kind::as_str)
            .collect()
    }

    async fn wait_synced(&self) {
        loop {
            let notified = self.synced_notify.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            if self.unsynced().is_empty() {
                return;
            }
            notified.await;
        }
    }

    /// Applies a cache change's consequences to the queue.
    #[doc(hidden)]
    pub fn act(&self, key: &str, change: Change) {
        watch::act(self, Some(key), change);
    }

    #[doc(hidden)]
    pub fn queue(&self) -> &Queue {
        &self.queue
    }

    #[doc(hidden)]
    pub fn metrics(&self) -> &Metrics {
        &self.metrics
    }
}

/// The scheduler: construct with [`Controller::new`], then [`Controller::run`].
pub struct Controller {
    shared: Arc<Shared>,
    cfg: Arc<SchedulerConfiguration>,
    elector: Option<Elector>,
}

impl Controller {
    /// A scheduler for a compiled configuration ([`crate::compile`]).
    pub fn new(compiled: Compiled, client: Client) -> Result<Controller, ControllerError> {
        Controller::with_metrics(compiled, client, Metrics::new())
    }

    /// As [`Controller::new`], reporting to `metrics` (whose REST client counter the client's
    /// requests may already feed).
    pub fn with_metrics(
        compiled: Compiled,
        client: Client,
        metrics: Metrics,
    ) -> Result<Controller, ControllerError> {
        Controller::with_clients(compiled, client.clone(), client, metrics)
    }

    /// As [`Controller::with_metrics`], sending events and `status.lastOperation` through
    /// `report_client` (its own rate limit, so reports never take the binds' share).
    pub fn with_clients(
        compiled: Compiled,
        client: Client,
        report_client: Client,
        metrics: Metrics,
    ) -> Result<Controller, ControllerError> {
        let Compiled {
            config: cfg, chain, ..
        } = compiled;
        let shoot_cfg = &cfg.schedulers.shoot;
        // What the profiles declare they read decides what is watched besides the fixed kinds.
        let carbon = chain.carbon_settings();
        let identity = default_identity();
        let (elector, leadership) = if cfg.leader_election.leader_elect {
            let (e, l) = Elector::new(client.clone(), &cfg.leader_election, identity.clone());
            (Some(e), l)
        } else {
            (None, Leadership::always())
        };
        let mut state = State::new(shoot_cfg.scheduler_names.clone());
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
                report_client,
                identity,
                REQUEST_TIMEOUT,
                report::QUEUE_CAPACITY,
                metrics.events_dropped.clone(),
                metrics.events_queued.clone(),
            )
            .with_score_notes(shoot_cfg.priorities.is_some() || shoot_cfg.profiles.is_some()),
            client,
            chain,
            name_profiles: shoot_cfg.profiles.is_some(),
            active_profile: Mutex::default(),
            binding_mode: shoot_cfg.binding_mode,
            retry_sync_period: shoot_cfg.retry_sync_period,
            state: Mutex::new(state),
            queue: Queue::with_metrics(
                BackoffPolicy {
                    initial: shoot_cfg.backoff.initial,
                    max: shoot_cfg.backoff.max,
                },
                workqueue,
            ),
            metrics,
            refusals: refusals::Refusals::default(),
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

    /// Runs until `shutdown` completes; then stops taking shoots, lets in-flight binds finish,
    /// and releases the lease.
    pub async fn run(self, shutdown: impl Future<Output = ()>) -> Result<(), ControllerError> {
        let Controller {
            shared,
            cfg,
            elector,
        } = self;
        let (stop_tx, stop_rx) = chan::channel(false);

        let health_addr = server::address(&cfg.server.health_probes);
        let metrics_addr = server::address(&cfg.server.metrics);
        let health = tokio::net::TcpListener::bind(health_addr)
            .await
            .map_err(|source| ControllerError::Listen {
                what: "server.healthProbes",
                address: health_addr,
                source,
            })?;
        let metrics = tokio::net::TcpListener::bind(metrics_addr)
            .await
            .map_err(|source| ControllerError::Listen {
                what: "server.metrics",
                address: metrics_addr,
                source,
            })?;
        let servers = [
            tokio::spawn(server::serve(
                health,
                server::health_router(shared.clone()),
                stop_rx.clone(),
            )),
            tokio::spawn(server::serve(
                metrics,
                server::metrics_router(shared.clone()),
                stop_rx.clone(),
            )),
        ];
        info!(health = %health_addr, metrics = %metrics_addr, binding_mode = ?shared.binding_mode,
              concurrent_syncs = cfg.schedulers.shoot.concurrent_syncs, "gardener-scheduler starting");

        let elector_task = elector.map(|e| {
            let shared = shared.clone();
            let lease_name = cfg.leader_election.resource_name.clone();
            info!(identity = %e.identity(), lease = %format!("{}/{}", cfg.leader_election.resource_namespace, cfg.leader_election.resource_name), "campaigning for leadership");
            tokio::spawn(e.run(stop_rx.clone(), move |leading| {
                shared.metrics.leader.set(leading as i64);
                shared.metrics.runtime.set_leader(&lease_name, leading);
                if leading {
                    // decide every waiting shoot afresh under the new term; a shoot whose bind
                    // the API server refused keeps its retry delay
                    let keys = shared.lock().pending_keys();
                    for key in keys {
                        shared.queue.add_unless_retrying(&key);
                    }
                }
            }))
        });

        let watches = watch::spawn_all(&shared);
        let housekeeping = tokio::spawn(housekeeping(shared.clone()));

        tokio::pin!(shutdown);
        let mut workers = Vec::new();
        tokio::select! {
            _ = shared.wait_synced() => {
                let (known, pending) = {
                    let st = shared.lock();
                    (st.known_shoots(), st.pending_count())
                };
                info!(shoots = known, pending, "all caches synced; scheduling");
                let workers_n = cfg.schedulers.shoot.concurrent_syncs.max(1);
                shared.metrics.runtime.reconcile.started(workers_n as usize);
                for i in 0..workers_n {
                    workers.push(tokio::spawn(worker(shared.clone(), i as usize)));
                }
                shutdown.await;
            }
            _ = &mut shutdown => {}
        }

        info!("shutting down: finishing in-flight binds");
        let stopping = Instant::now();
        shared.queue.shut_down();
        let drain = futures::future::join_all(workers);
        if tokio::time::timeout(DRAIN_TIMEOUT, drain).await.is_err() {
            warn!("in-flight binds did not finish within {DRAIN_TIMEOUT:?}");
        }
        // Reports of the binds just finished are queued: send them before the lease goes.
        let outstanding = shared.reporter.outstanding();
        if outstanding > 0 {
            info!(
                reports = outstanding,
                "sending the queued events before exiting"
            );
        }
        // binds and reports share the drain time; the reports get at least a few seconds
        let left = DRAIN_TIMEOUT
            .saturating_sub(stopping.elapsed())
            .max(MIN_REPORT_DRAIN);
        let lost = shared.reporter.flush(left).await;
        if lost > 0 {
            warn!(
                reports = lost,
                "queued events not sent within {left:?}; exiting without them"
            );
        }
        let _ = stop_tx.send(true);
        if let Some(t) = elector_task {
            let _ = tokio::time::timeout(REQUEST_TIMEOUT, t).await;
        }
        for w in watches {
            w.abort();
        }
        housekeeping.abort();
        for s in servers {
            let _ = tokio::time::timeout(Duration::from_secs(5), s).await;
        }
        info!("stopped");
        Ok(())
    }

    /// The shared state, for tests that drive single steps.
    #[doc(hidden)]
    pub fn shared(&self) -> &Arc<Shared> {
        &self.shared
    }
}

async fn housekeeping(shared: Arc<Shared>) {
    let mut tick = tokio::time::interval(Duration::from_secs(10));
    loop {
        tick.tick().await;
        let expired = shared.lock().expire_assumptions(Instant::now());
        for key in expired {
            warn!(shoot = %key, "bind never showed up in the watch; no longer counting it");
            shared.queue.add(&key);
        }
        carbon_metrics::refresh(&shared);
    }
}

async fn worker(shared: Arc<Shared>, id: usize) {
    let mut leadership = shared.leadership.clone();
    loop {
        leadership.wait_until_leader().await;
        let Some(key) = shared.queue.next().await else {
            break;
        };
        let busy = shared.metrics.runtime.reconcile.busy();
        let start = Instant::now();
        let attempt = process(&shared, &key)
            .instrument(info_span!(
                "schedule",
                shoot = %key,
                worker = id,
                profile = tracing::field::Empty
            ))
            .await;
        shared
            .metrics
            .runtime
            .reconcile
            .reconciled(attempt.reconcile_result(), start.elapsed());
        drop(busy);
        shared.queue.done(&key);
    }
}

/// What happened to one shoot in one attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
#[doc(hidden)]
pub enum Attempt {
    /// nothing to do (not pending, or already being bound)
    Skipped,
    /// leadership was lost before the bind: queued again for whoever leads
    NotLeader,
    Scheduled(String),
    Unschedulable,
    /// a freeze window or no active profile; retried when the chain switches (`Some(after)`)
    /// or on a relevant change (`None`)
    Deferred(Option<Duration>),
    /// the shoot changed meanwhile; decided again
    Conflict,
    /// someone else assigned a seed; left alone
    LeftAlone(String),
    Error,
}

impl Attempt {
    /// What upstream's reconciler would have returned for the same situation (see
    /// `runtime_metrics`).
    pub fn reconcile_result(&self) -> ReconcileResult {
        match self {
            Attempt::Scheduled(_) | Attempt::Skipped | Attempt::LeftAlone(_) => {
                ReconcileResult::Success
            }
            Attempt::Deferred(None) => ReconcileResult::Success,
            Attempt::Deferred(Some(_)) => ReconcileResult::RequeueAfter,
            Attempt::NotLeader => ReconcileResult::Requeue,
            // upstream returns the error of DetermineSeed or of the binding update (a 409
            // included)
            Attempt::Unschedulable | Attempt::Conflict | Attempt::Error => ReconcileResult::Error,
        }
    }
}

/// What reading the shoot after a bind with an unknown outcome found.
enum Resolved {
    /// bound meanwhile or still pending: the cache is current, the shoot may be decided now
    Current,
    Gone,
    /// the read failed; asked again later
    Unknown,
}

/// Resolves a bind whose outcome was unknown.
async fn resolve_uncertain(shared: &Shared, key: &str) -> Resolved {
    let (ns, name) = key.split_once('/').unwrap_or(("", key));
    match bind::read_shoot(&shared.client, ns, name, REQUEST_TIMEOUT).await {
        Ok(Some((current, raw))) => {
            // Bound meanwhile: the watch version wins. Still pending: the bind did not happen.
            let mut st = shared.lock();
            let c = st.forget_assumption(key);
            let c2 = st.apply_raw_shoot(&current, &raw);
            drop(st);
            shared.act(
                key,
                Change {
                    enqueue: false,
                    wake: c2.wake,
                    requeue: c.requeue,
                    freed_on: c.freed_on,
                },
            );
            Resolved::Current
        }
        Ok(None) => {
            let c = shared.lock().remove_shoot(key);
            shared.act(key, c);
            Resolved::Gone
        }
        Err(e) => {
            let retry_in = shared.queue.add_retry(key, shared.retry_sync_period);
            warn!(error = %e, ?retry_in, "cannot tell whether the last bind happened; asking again later");
            Resolved::Unknown
        }
    }
}

/// One scheduling attempt for one shoot.
#[doc(hidden)]
pub async fn process(shared: &Shared, key: &str) -> Attempt {
    let uncertain = shared.lock().assumption(key).is_some_and(|a| a.uncertain);
    if uncertain {
        match resolve_uncertain(shared, key).await {
            Resolved::Current => {}
            Resolved::Gone => return Attempt::Skipped,
            Resolved::Unknown => return Attempt::Error,
        }
    }
    let start = Instant::now();
    let now = Utc::now();
    let (shoot, raw, verdict) = {
        let mut st = shared.lock();
        let Some(shoot) = st.pending(key) else {
            shared.queue.forget(key);
            return Attempt::Skipped;
        };
        let raw = st.pending_raw(key);
        let verdict = match shared.chain.select(now) {
            Selection::Profile { entry, profile } => {
                shared.note_active_profile(Some(entry));
                let result = decide(&shoot, &st.snapshot, profile, now);
                match &result {
                    Ok(d) => st.assume(&shoot, &d.seed),
                    Err(fit) => st.note_refused(key, fit),
                }
                Ok((entry.to_string(), result))
            }
            Selection::Deferred { reason, retry_at } => {
                let entry = shared.chain.active(now).map(|e| e.id.clone());
                shared.note_active_profile(entry.as_deref());
                Err((entry, reason, retry_at))
            }
        };
        (shoot, raw, verdict)
    };
    let (entry, result) = match verdict {
        Ok(decided) => decided,
        Err((entry, reason, retry_at)) => {
            let entry = entry.unwrap_or_else(|| "none".into());
            tracing::Span::current().record("profile", entry.as_str());
            shared.metrics.observe(
                AttemptResult::deferred,
                &entry,
                start.elapsed().as_secs_f64(),
            );
            // Retry when the chain switches, not by polling; without a next switch the shoot
            // waits for a relevant change (or a new configuration).
            let retry_in = retry_at.map(|t| {
                (t - now)
                    .to_std()
                    .unwrap_or_default()
                    .max(Duration::from_secs(1))
            });
            match retry_in {
                Some(d) => shared.queue.add_after(key, d),
                None => shared.queue.forget(key),
            }
            info!(%reason, ?retry_in, "scheduling deferred");
            if shared.leadership.is_leader() {
                shared.reporter.deferred(&shoot, &reason);
            }
            return Attempt::Deferred(retry_in);
        }
    };
    tracing::Span::current().record("profile", entry.as_str());
    match result {
        Ok(decision) => {
            let seed = decision.seed.clone();
            let span = info_span!("bind", seed = %seed);
            bind_decision(shared, key, &shoot, raw.as_deref(), &decision, start)
                .instrument(span)
                .await
        }
        Err(fit) => {
            shared.metrics.observe(
                AttemptResult::unschedulable,
                &entry,
                start.elapsed().as_secs_f64(),
            );
            let delay = shared.queue.add_backoff(key);
            info!(reason = %fit, retry_in = ?delay, "shoot does not fit any seed");
            if shared.leadership.is_leader() {
                shared.reporter.failed(&shoot, &fit);
            }
            Attempt::Unschedulable
        }
    }
}

async fn bind_decision(
    shared: &Shared,
    key: &str,
    shoot: &Shoot,
    raw: Option<&str>,
    decision: &crate::schedule::Decision,
    start: Instant,
) -> Attempt {
    if !shared.leadership.is_leader() {
        let c = shared.lock().forget_assumption(key);
        shared.act(key, c);
        shared.queue.add(key);
        return Attempt::NotLeader;
    }
    let seed = &decision.seed;
    let result = bind::bind(
        &shared.client,
        shared.binding_mode,
        shoot,
        raw,
        seed,
        REQUEST_TIMEOUT,
        &shared.leadership,
    )
    .await;
    match &result {
        Ok(_) => shared.refusals.bound(&shared.metrics),
        Err(e) => {
            if let Some(code) = e.code() {
                shared.metrics.bind_error(&code);
            }
        }
    }
    match result {
        Ok(_) => {
            shared.lock().confirm_bind(key);
            shared.queue.forget(key);
            shared.metrics.observe(
                AttemptResult::scheduled,
                &decision.profile,
                start.elapsed().as_secs_f64(),
            );
            info!(score = %decision.winner().short(), "scheduled");
            // queued: the bind does not wait for its event
            shared
                .reporter
                .scheduled(shoot, decision, shared.name_profiles);
            Attempt::Scheduled(seed.clone())
        }
        Err(BindError::Conflict) => {
            shared.metrics.conflicts.inc();
            drop_assumption(shared, key);
            reread(shared, key).await;
            let retry_in = shared
                .queue
                .add_conflict_retry(key, shared.retry_sync_period);
            info!(?retry_in, "shoot changed while binding; deciding again");
            Attempt::Conflict
        }
        Err(BindError::AlreadyAssigned(other)) => {
            shared.metrics.conflicts.inc();
            drop_assumption(shared, key);
            reread(shared, key).await;
            shared.queue.forget(key);
            info!(assigned = %other, "someone else assigned a seed meanwhile; leaving the shoot alone");
            Attempt::LeftAlone(other)
        }
        Err(BindError::NotFound) => {
            let c = shared.lock().remove_shoot(key);
            shared.act(key, c);
            shared.queue.forget(key);
            debug!("shoot deleted before it could be bound");
            Attempt::Skipped
        }
        Err(BindError::NotLeader) => {
            let c = shared.lock().forget_assumption(key);
            shared.act(key, c);
            shared.queue.add(key);
            info!("leadership lost before the bind was written; not binding");
            Attempt::NotLeader
        }
        Err(e) if e.outcome_unknown() => {
            shared.lock().mark_uncertain(key);
            shared.metrics.observe(
                AttemptResult::error,
                &decision.profile,
                start.elapsed().as_secs_f64(),
            );
            let retry_in = shared.queue.add_retry(key, shared.retry_sync_period);
            warn!(error = %e, ?retry_in, "bind outcome unknown; checking again later");
            Attempt::Error
        }
        Err(e) => {
            drop_assumption(shared, key);
            shared.metrics.observe(
                AttemptResult::error,
                &decision.profile,
                start.elapsed().as_secs_f64(),
            );
            // Retried with growing delays.
            let retry_in = shared.queue.add_retry(key, shared.retry_sync_period);
            if refusals::Refusals::tracks(&e) {
                shared.refusals.refused(&e, retry_in, &shared.metrics);
            } else {
                warn!(error = %e, ?retry_in, "bind failed");
            }
            // As upstream: a refused bind (anything but 409) is reported like a failed decision.
            shared.reporter.bind_failed(shoot, &e);
            Attempt::Error
        }
    }
}

/// Stops counting a placement that will not happen; waiting shoots may now fit, but this one
/// is requeued (or not) by the caller.
fn drop_assumption(shared: &Shared, key: &str) {
    let c = shared.lock().forget_assumption(key);
    shared.act(
        key,
        Change {
            enqueue: false,
            ..c
        },
    );
}

/// Reads a shoot again after a conflict so the next decision (if any) sees what changed,
/// without waiting for the watch.
async fn reread(shared: &Shared, key: &str) {
    let (ns, name) = key.split_once('/').unwrap_or(("", key));
    match bind::read_shoot(&shared.client, ns, name, REQUEST_TIMEOUT).await {
        Ok(Some((current, raw))) => {
            let c = shared.lock().apply_raw_shoot(&current, &raw);
            shared.act(
                key,
                Change {
                    enqueue: false,
                    ..c
                },
            );
        }
        Ok(None) => {
            let c = shared.lock().remove_shoot(key);
            shared.act(key, c);
        }
        Err(e) => {
            debug!(error = %e, "re-reading after a conflict failed; the watch will bring the change")
        }
    }
}

/// Runs the scheduler for a compiled configuration until SIGTERM or SIGINT.
pub async fn run_with_signals(compiled: Compiled) -> Result<(), ControllerError> {
    let cc = &compiled.config.client_connection;
    let metrics = Metrics::new();
    let client = client_from_kubeconfig(
        &cc.kubeconfig,
        cc.qps,
        cc.burst,
        &metrics.runtime.rest_client,
    )
    .await?;
    // Events and status.lastOperation go through a client of their own with the same
    // `clientConnection` limit (as upstream's event recorder has its own client): reports
    // never take the binds' share of the limit.
    let report_client = build_client(
        &cc.kubeconfig,
        cc.qps,
        cc.burst,
        &[&metrics.runtime.rest_client, &metrics.event_client],
    )
    .await?;
    let controller = Controller::with_clients(compiled, client, report_client, metrics)?;
    controller.run(shutdown_signal()).await
}

/// Completes on SIGTERM or SIGINT.
pub async fn shutdown_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(e) => {
            error!(error = %e, "cannot listen for SIGTERM");
            return std::future::pending().await;
        }
    };
    tokio::select! {
        _ = term.recv() => info!("received SIGTERM"),
        _ = tokio::signal::ctrl_c() => info!("received SIGINT"),
    }
}

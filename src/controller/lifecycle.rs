//! Start and stop: HTTP servers, the leader election, the watches, housekeeping and the
//! workers; on shutdown, in-flight binds and queued reports get a bounded time to finish.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use crate::compile::Compiled;
use crate::controller::client::stack::REQUEST_TIMEOUT;
use crate::controller::client::{self, Connection};
use crate::controller::error::ControllerError;
use crate::controller::feed::carbon;
use crate::controller::feed::watch;
use crate::controller::metrics::Metrics;
use crate::controller::process::{BesideTask, Controller};
use crate::controller::shared::Shared;
use crate::controller::worker::worker;
use crate::controller::{attempt, control, server};
use tokio::sync::Notify;
use tokio::sync::watch as chan;
use tokio::time::Instant;
use tracing::{debug, error, info, warn};

/// How long a shutdown waits for in-flight binds and then the queued reports, together.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);
/// The least a shutdown leaves for sending queued reports after slow binds.
const MIN_REPORT_DRAIN: Duration = Duration::from_secs(5);
/// How long a shutdown waits for the control thread: the Lease released (one request) and the
/// health server stopped.
const CONTROL_STOP: Duration = Duration::from_secs(REQUEST_TIMEOUT.as_secs() + 5);
/// How long a shutdown waits for the metrics server to stop.
const METRICS_STOP: Duration = Duration::from_secs(5);
/// The longest a shutdown can take after SIGTERM, every step using all of its time: the pod's
/// `terminationGracePeriodSeconds` must outlast it (the chart's tests check the default).
pub const LONGEST_STOP: Duration = Duration::from_secs(
    DRAIN_TIMEOUT.as_secs()
        + MIN_REPORT_DRAIN.as_secs()
        + CONTROL_STOP.as_secs()
        + METRICS_STOP.as_secs(),
);

impl Controller {
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
        // bound here, served on the control thread
        let health = std::net::TcpListener::bind(health_addr)
            .and_then(|l| l.set_nonblocking(true).map(|()| l))
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
        let metrics_server = tokio::spawn(server::serve(
            metrics,
            server::metrics_router(shared.clone()),
            stop_rx.clone(),
        ));
        info!(health = %health_addr, metrics = %metrics_addr, binding_mode = ?shared.binding_mode,
              concurrent_syncs = cfg.schedulers.shoot.concurrent_syncs, "gardener-scheduler starting");

        let elected = Arc::new(Notify::new());
        let control = control::start(control::Parts {
            health,
            shared: shared.clone(),
            elector: elector.map(|e| (e, cfg.leader_election.clone())),
            elected: elected.clone(),
            stop: stop_rx.clone(),
        })
        .map_err(|source| ControllerError::Listen {
            what: "server.healthProbes",
            address: health_addr,
            source,
        })?;

        let watches = watch::spawn_all(&shared);
        let housekeeping = tokio::spawn(housekeeping(shared.clone()));
        let heartbeat = tokio::spawn(heartbeat(shared.clone()));
        let requeue = tokio::spawn(decide_afresh_when_elected(shared.clone(), elected));

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
        // the lease released (or given up on) and the health server stopped
        if tokio::time::timeout(CONTROL_STOP, control).await.is_err() {
            warn!("the leader election and health server did not stop in time");
        }
        for w in watches {
            w.abort();
        }
        housekeeping.abort();
        heartbeat.abort();
        requeue.abort();
        let _ = tokio::time::timeout(METRICS_STOP, metrics_server).await;
        info!("stopped");
        Ok(())
    }
}

/// On winning the lease: every waiting shoot is decided afresh under the new term (a shoot
/// whose bind the API server refused keeps its retry delay). Here, not in the elector's
/// callback: the cache's lock is never taken on the control thread.
async fn decide_afresh_when_elected(shared: Arc<Shared>, elected: Arc<Notify>) {
    loop {
        elected.notified().await;
        let keys = shared.lock().pending_keys();
        for key in keys {
            shared.queue.add_unless_retrying(&key);
        }
    }
}

/// Tells `/healthz` (on the control thread) that this runtime still runs tasks.
async fn heartbeat(shared: Arc<Shared>) {
    let mut tick = tokio::time::interval(crate::controller::liveness::HEARTBEAT);
    loop {
        tick.tick().await;
        shared.heartbeat.beat();
    }
}

/// Every 10 s: reads the shoots of binds the watch has not confirmed for a while and applies
/// what the reads show, and refreshes the carbon metrics.
async fn housekeeping(shared: Arc<Shared>) {
    let mut tick = tokio::time::interval(Duration::from_secs(10));
    loop {
        tick.tick().await;
        let unconfirmed = shared.lock().unconfirmed(Instant::now());
        // a handful per tick: a stalled watch must not turn into a burst of reads
        for (key, seed) in unconfirmed.into_iter().take(UNCONFIRMED_READS_PER_TICK) {
            match attempt::settle_unknown(&shared, &key, &seed).await {
                attempt::Settled::Bound => {
                    info!(shoot = %key, %seed, "bind not yet shown by the watch; a read confirms it")
                }
                attempt::Settled::Other => {
                    warn!(shoot = %key, %seed, "bind not shown by the watch, and a read shows the shoot elsewhere, pending or gone; counting what the read shows");
                    shared.queue.add(&key);
                }
                attempt::Settled::Unknown => {
                    debug!(shoot = %key, "confirming a bind by a read failed; trying again")
                }
            }
        }
        carbon::refresh(&shared);
    }
}

/// Unconfirmed binds read per housekeeping tick.
const UNCONFIRMED_READS_PER_TICK: usize = 20;

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

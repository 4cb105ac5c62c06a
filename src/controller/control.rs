//! The control thread: the health server and the leader election on a thread with a runtime
//! of its own. Nothing the scheduling runtime does — a long decision holding the cache, a
//! burst of watch events, a slow scrape — delays a probe's answer or a lease renewal, and
//! nothing here takes the cache's lock. `/healthz` still reports a scheduling runtime that has
//! stopped running tasks (its heartbeat, see `liveness`), so that a wedged process is
//! restarted rather than kept alive by this thread.

use std::future::Future;
use std::sync::Arc;

use crate::config::LeaderElection;
use crate::controller::client::LeaseClient;
use crate::controller::leader::Elector;
use crate::controller::server;
use crate::controller::shared::Shared;
use tokio::sync::{Notify, oneshot, watch};
use tracing::{info, warn};

/// What the elector is made of once it runs: its client is made on the control thread (see
/// `lifecycle`).
pub(super) struct ElectorPlan {
    pub(super) lease: LeaseClient,
    pub(super) identity: String,
    pub(super) tx: tokio::sync::watch::Sender<Option<tokio::time::Instant>>,
}

impl ElectorPlan {
    /// The elector, its client's task on the current runtime.
    pub(super) fn build(self, cfg: &LeaderElection) -> Elector {
        Elector::reporting_to(self.lease.build(), cfg, self.identity, self.tx)
    }
}

/// What runs on the control thread.
pub(super) struct Parts {
    /// the bound health listener (`server.healthProbes`)
    pub(super) health: std::net::TcpListener,
    pub(super) shared: Arc<Shared>,
    pub(super) elector: Option<(ElectorPlan, LeaderElection)>,
    /// notified each time this process wins the lease
    pub(super) elected: Arc<Notify>,
    pub(super) stop: watch::Receiver<bool>,
}

/// Starts the control thread; the future completes once the health server has stopped and
/// the elector has released the lease (after `stop` turns true).
pub(super) fn start(parts: Parts) -> std::io::Result<impl Future<Output = ()>> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    let (done_tx, done_rx) = oneshot::channel();
    std::thread::Builder::new()
        .name("control".into())
        .spawn(move || {
            runtime.block_on(run(parts));
            let _ = done_tx.send(());
        })?;
    Ok(async move {
        let _ = done_rx.await;
    })
}

async fn run(parts: Parts) {
    let Parts {
        health,
        shared,
        elector,
        elected,
        stop,
    } = parts;
    let server = async {
        match tokio::net::TcpListener::from_std(health) {
            Ok(listener) => {
                server::serve(
                    listener,
                    server::health_router(shared.clone()),
                    stop.clone(),
                )
                .await
            }
            Err(e) => warn!(error = %e, "cannot serve the health probes"),
        }
    };
    let election = async {
        let Some((plan, cfg)) = elector else {
            return;
        };
        // made here: the client's task runs on this thread's runtime
        let elector = plan.build(&cfg);
        info!(identity = %elector.identity(), lease = %format!("{}/{}", cfg.resource_namespace, cfg.resource_name), "campaigning for leadership");
        let unfit = {
            let shared = shared.clone();
            move || shared.unfit_to_lead()
        };
        let on_change = {
            let shared = shared.clone();
            move |leading: bool| {
                shared.metrics.leader.set(leading as i64);
                shared
                    .metrics
                    .runtime
                    .set_leader(&cfg.resource_name, leading);
                if leading {
                    elected.notify_one();
                }
            }
        };
        elector.run(stop.clone(), unfit, on_change).await;
    };
    tokio::join!(server, election);
}

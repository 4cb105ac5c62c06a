//! The scheduler process: watches feed the cache, workers take shoots from the queue, decide with
//! [`crate::schedule::decide_within`] (the decision's fast mode, within its budget), bind, and
//! tell people what happened.
//!
//! ```text
//! feed/ ─► cache/ ─► queue.rs ─► worker.rs ─► attempt/ ─────────► events/
//! (list,   (Snapshot,   ▲                     decide+assume,      (Events, lastOperation,
//!  watch)   assumptions) │                     bind (leader only)  decision records)
//!                       └── attempt/requeue.rs: the one Requeue each attempt returns
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
//! The folders follow the diagram: `feed/` lists and watches each kind and decodes what
//! arrives; `cache/` is what the process knows; `attempt/` decides, binds and settles one shoot;
//! `events/` is what people see of it; `client/` is the request stack every request goes
//! through (caps, deadlines, retries, the lease fence, permissions); `metrics/` is what
//! `/metrics` serves; `leader/` is the Lease. At the top: `shared.rs` (what the watches, workers
//! and HTTP handlers share), `error.rs`, the queue, the worker, the health server and
//! `lifecycle.rs`, which starts and stops everything. Nothing below imports this file.

mod attempt;
mod cache;
mod client;
mod control;
mod error;
mod events;
mod feed;
mod leader;
mod lifecycle;
mod liveness;
mod metrics;
mod process;
mod queue;
mod server;
mod shared;
#[cfg(test)]
mod tests;
mod worker;

pub use client::permissions;

pub use cache::{Assumption, Cache, Change, OtherUpdate, Waiting, WatchedKind};
pub use client::bind::{BindError, FIELD_MANAGER, bind, binding_object, raw_shoots, read_shoot};
pub use client::brief::brief;
pub use client::decode::decode;
pub use client::stack::{
    LIST_PAGE_BYTES, OBJECT_BYTES, REQUEST_TIMEOUT, TooLarge, WATCH_EVENT_BYTES, in_chain,
};
pub use client::{ApiClients, Connection, client_from_config, client_from_kubeconfig, load_config};
pub use error::ControllerError;
pub use events::{
    REASON_DEFERRED, REASON_FAILED, REASON_GATED, REASON_SCHEDULED, REPORTING_CONTROLLER,
    ReportError, Reporter, failure_description, truncate_note,
};
pub use leader::{Elector, Leadership, LeaseError, default_identity};
pub use lifecycle::LONGEST_STOP;
pub use lifecycle::shutdown_signal;
pub use metrics::carbon::CarbonMetrics;
pub use metrics::evacuation::{EvacuationMetrics, MOVE_REFUSED, MOVE_STARTED};
pub use metrics::rest::RestClientMetrics;
pub use metrics::runtime::{CONTROLLER, ReconcileResult};
pub use metrics::{AttemptResult, Metrics};
pub use queue::{BackoffPolicy, Queue};

// Single-step access for this crate's tests, e2e tests and benches (the `test-util` feature).
#[cfg(any(test, feature = "test-util"))]
pub use attempt::Attempt;
#[cfg(any(test, feature = "test-util"))]
pub use cache::{PendingShoot, Sent, ShootUpdate};
#[cfg(any(test, feature = "test-util"))]
pub use feed::incoming::WatchedShoot;
#[cfg(any(test, feature = "test-util"))]
pub use feed::lines::Wire;
#[cfg(any(test, feature = "test-util"))]
pub use shared::Shared;
#[cfg(any(test, feature = "test-util"))]
pub use worker::schedule_one;

pub use lifecycle::run_with_signals;
pub use process::{Beside, BesideTask, Controller};

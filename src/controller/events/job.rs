//! What one report sends (an event, or a failure with `status.lastOperation`), under which
//! reason, and how sending it can fail.

use std::time::Duration;

use crate::api::Shoot;

/// `reportingController` of every event: upstream's event recorder name (`shoot` controller +
/// `-scheduler`), so that event queries written for upstream find ours.
pub const REPORTING_CONTROLLER: &str = "shoot-scheduler";
pub const REASON_SCHEDULED: &str = "SchedulingSuccessful";
pub const REASON_FAILED: &str = "SchedulingFailed";
/// A freeze window or no active profile keeps the shoot waiting; not a failure.
pub const REASON_DEFERRED: &str = "SchedulingDeferred";
/// Scheduling gates (the annotation `scheduling.gardener.cloud/gates`) hold the shoot; not a
/// failure.
pub const REASON_GATED: &str = "SchedulingGated";

#[derive(Debug, thiserror::Error)]
pub enum ReportError {
    #[error("publishing event {reason} for {shoot}: {}", crate::controller::client::brief::brief(.source))]
    PublishEvent {
        reason: &'static str,
        shoot: String,
        source: kube::Error,
    },
    #[error("patching status.lastOperation of {shoot}: {}", crate::controller::client::brief::brief(.source))]
    PatchStatus { shoot: String, source: kube::Error },
    #[error("{action} for {shoot}: no answer within {limit:?}")]
    Timeout {
        action: &'static str,
        shoot: String,
        limit: Duration,
    },
}

/// One report to send.
pub(super) enum Job {
    Event {
        shoot: Shoot,
        type_: &'static str,
        reason: &'static str,
        note: String,
    },
    /// a `SchedulingFailed` event and `status.lastOperation`
    Failure {
        shoot: Shoot,
        note: String,
        description: String,
    },
}

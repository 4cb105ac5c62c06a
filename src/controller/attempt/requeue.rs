//! The one decision an attempt makes about its shoot's own key, and the one place that applies
//! it to the queue (as kube-runtime's reconcilers return an `Action` that the controller loop
//! applies).
//!
//! Other shoots are queued through [`Shared::queue_affected`] when the cache changes; this is
//! only about the key that was just processed.

use std::time::Duration;

use crate::controller::client::bind::BindError;
use crate::controller::queue::Queue;
use crate::controller::shared::Shared;
use tracing::{Span, info, warn};

/// What becomes of the processed shoot's key.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(in crate::controller) enum Requeue {
    /// Done with it: its failure counts and any delay are cleared; a watch event brings it back.
    Forget,
    /// Decided again as soon as a worker is free (leadership moved before the bind).
    Now,
    /// Decided again after a fixed delay (the profile chain switches then), or sooner on a
    /// relevant change.
    After(Duration),
    /// Decided again after its growing backoff for not fitting, or sooner on a relevant change.
    Backoff,
    /// Tried again after an API error's growing retry delay; nothing brings it sooner.
    Retry,
    /// As [`Requeue::Retry`], but no sooner than the server asked (`Retry-After`).
    RetryAtLeast(Duration),
    /// Decided again at once after a first conflict, then as [`Requeue::Retry`].
    ConflictRetry,
    /// The queue is left as it is (the shoot is gone; the watch took care of it).
    Leave,
}

impl Requeue {
    /// Applies the decision; returns the delay the queue chose, if it chose one.
    pub(in crate::controller) fn apply(
        self,
        queue: &Queue,
        key: &str,
        retry_sync_period: Duration,
    ) -> Duration {
        match self {
            Requeue::Forget => {
                queue.forget(key);
                Duration::ZERO
            }
            Requeue::Now => {
                queue.add(key);
                Duration::ZERO
            }
            Requeue::After(delay) => {
                queue.add_after(key, delay);
                delay
            }
            Requeue::Backoff => queue.add_backoff(key),
            Requeue::Retry => queue.add_retry(key, retry_sync_period),
            Requeue::RetryAtLeast(at_least) => {
                queue.add_retry_at_least(key, retry_sync_period, at_least)
            }
            Requeue::ConflictRetry => queue.add_conflict_retry(key, retry_sync_period),
            Requeue::Leave => Duration::ZERO,
        }
    }
}

/// What is said about an attempt once the queue has chosen its delay: these log lines name it
/// (`retry_in`), and operators read them (docs/operations/troubleshooting.md).
pub(in crate::controller) enum Announce {
    /// the shoot fits no seed
    DoesNotFit { reason: String },
    /// 409 on the bind
    Conflict,
    /// the bind got no answer that proves it was refused, and a read could not tell either
    BindOutcomeUnknown { error: String },
    /// the bind got no conclusive answer, and a read shows it was not applied
    BindNotApplied { error: String },
    /// the bind failed on any other API error
    BindFailed(BindError),
    /// reading the shoot to learn whether an unanswered bind happened failed
    ReadFailed { error: String },
    /// the decision did not finish within `schedulers.shoot.decisionBudget`
    OverBudget { reason: String },
    /// the decision's task did not complete
    DecisionFailed { error: String },
}

impl Announce {
    /// Pairs the announcement with the current span, so the line carries the same fields
    /// (`shoot`, `seed`, `profile`) as if it were logged here.
    pub(in crate::controller) fn here(self) -> Announcement {
        Announcement {
            what: self,
            span: Span::current(),
        }
    }
}

pub(in crate::controller) struct Announcement {
    what: Announce,
    span: Span,
}

impl Announcement {
    pub(in crate::controller) fn log(self, shared: &Shared, retry_in: Duration) {
        let _entered = self.span.enter();
        match self.what {
            Announce::DoesNotFit { reason } => {
                info!(%reason, ?retry_in, "shoot does not fit any seed");
            }
            Announce::Conflict => info!(?retry_in, "shoot changed while binding; deciding again"),
            Announce::BindOutcomeUnknown { error } => {
                warn!(%error, ?retry_in, "bind outcome unknown; checking again later");
            }
            Announce::BindNotApplied { error } => {
                warn!(%error, ?retry_in, "bind got no conclusive answer and a read shows it was not applied; trying again");
            }
            Announce::BindFailed(e) => {
                if crate::controller::events::refusals::Refusals::tracks(&e) {
                    shared.refusals.refused(&e, retry_in, &shared.metrics);
                } else {
                    warn!(error = %e, ?retry_in, "bind failed");
                }
            }
            Announce::ReadFailed { error } => {
                warn!(%error, ?retry_in, "cannot tell whether the last bind happened; asking again later");
            }
            Announce::OverBudget { reason } => {
                warn!(%reason, ?retry_in, "decision over its budget; trying again later");
            }
            Announce::DecisionFailed { error } => {
                warn!(%error, ?retry_in, "decision failed; trying again");
            }
        }
    }
}

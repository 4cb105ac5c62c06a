//! One scheduling attempt for one shoot: decide and assume under the cache's lock, bind outside
//! it, report. The attempt never touches its own key in the queue: it returns an [`Outcome`]
//! whose [`Requeue`] the worker applies, and the worker records its metric from the returned
//! [`Attempt`]. Every change the attempt makes to the cache goes through [`Shared::change`].

use std::sync::Arc;
use std::time::Duration;

use chrono::Utc;
use tracing::{Instrument, debug, info, info_span};

mod settle;

pub(in crate::controller) mod requeue;

use crate::api::{Gates, Shoot};
use crate::budget::Deadline;
use crate::chain::Selection;
use crate::controller::attempt::requeue::{Announce, Announcement, Requeue};
use crate::controller::cache::{Change, Waiting};
use crate::controller::cache::{Sent, ShootUpdate};
use crate::controller::client::bind::{self, BindError};
use crate::controller::client::stack::REQUEST_TIMEOUT;
use crate::controller::metrics::AttemptResult;
use crate::controller::metrics::runtime::ReconcileResult;
use crate::controller::shared::Shared;
use crate::controller::shared::Unsettled;
use crate::schedule::{Decision, FitError, decide_within, rejections_by_stage};
#[cfg(test)]
pub(super) use settle::SETTLE_TRIES;
use settle::read_to_settle;
pub(super) use settle::settled_by_seen;

/// What happened to one shoot in one attempt.
#[derive(Clone, Debug, PartialEq, Eq)]
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
    /// held by its scheduling gates; decided again when they change
    Gated,
    /// the shoot changed meanwhile; decided again
    Conflict,
    /// someone else assigned a seed; left alone
    LeftAlone(String),
    /// the bind got no answer and a read could not tell either: counted once the watch or the
    /// next read shows what happened
    Unsettled,
    Error,
}

impl Attempt {
    /// The `result` label of the attempt metrics, for attempts that reached a decision.
    pub fn metric(&self) -> Option<AttemptResult> {
        match self {
            Attempt::Scheduled(_) => Some(AttemptResult::scheduled),
            Attempt::Unschedulable => Some(AttemptResult::unschedulable),
            Attempt::Deferred(_) => Some(AttemptResult::deferred),
            Attempt::Error => Some(AttemptResult::error),
            Attempt::Skipped
            | Attempt::NotLeader
            | Attempt::Conflict
            | Attempt::LeftAlone(_)
            | Attempt::Unsettled
            | Attempt::Gated => None,
        }
    }

    /// What upstream's reconciler would have returned for the same situation (see
    /// `runtime_metrics`).
    pub fn reconcile_result(&self) -> ReconcileResult {
        match self {
            Attempt::Scheduled(_) | Attempt::Skipped | Attempt::LeftAlone(_) => {
                ReconcileResult::Success
            }
            Attempt::Deferred(None) | Attempt::Gated => ReconcileResult::Success,
            Attempt::Deferred(Some(_)) => ReconcileResult::RequeueAfter,
            Attempt::NotLeader | Attempt::Unsettled => ReconcileResult::Requeue,
            // upstream returns the error of DetermineSeed or of the binding update (a 409
            // included)
            Attempt::Unschedulable | Attempt::Conflict | Attempt::Error => ReconcileResult::Error,
        }
    }
}

/// An attempt's result: what happened, what becomes of the key, and what to log once the queue
/// has chosen the delay.
pub(super) struct Outcome {
    pub(super) attempt: Attempt,
    pub(super) requeue: Requeue,
    pub(super) announce: Option<Announcement>,
    /// The profile (chain entry) that decided, once a decision was reached: the attempt is
    /// then counted under it (an attempt that failed before deciding is not counted).
    pub(super) profile: Option<String>,
}

impl Outcome {
    fn new(attempt: Attempt, requeue: Requeue) -> Outcome {
        Outcome {
            attempt,
            requeue,
            announce: None,
            profile: None,
        }
    }

    fn announcing(attempt: Attempt, requeue: Requeue, what: Announce) -> Outcome {
        Outcome {
            announce: Some(what.here()),
            ..Outcome::new(attempt, requeue)
        }
    }

    fn decided_by(self, profile: &str) -> Outcome {
        Outcome {
            profile: Some(profile.to_string()),
            ..self
        }
    }
}

/// What reading the shoot after a bind with an unknown outcome found.
enum Resolved {
    /// bound meanwhile or still pending: the cache is current, the shoot may be decided now
    Current,
    Gone,
    /// the read failed; asked again later
    Unknown(String),
}

/// Resolves a bind whose outcome was unknown by reading the shoot.
async fn resolve_uncertain(shared: &Shared, key: &str) -> Resolved {
    let (ns, name) = key.split_once('/').unwrap_or(("", key));
    match bind::read_shoot(&shared.client, ns, name, REQUEST_TIMEOUT).await {
        Ok(read) => {
            let seed = read.as_ref().map(|(s, _)| s.spec.seed_name.clone());
            let resolved = apply_read(shared, key, read);
            settled_by_seen(shared, key, seed.as_ref().map(Option::as_deref), true);
            resolved
        }
        Err(e) => Resolved::Unknown(e.to_string()),
    }
}

/// A shoot read from the API server, prepared for the cache before its lock is taken.
fn read_update<'a>(shared: &Shared, shoot: &'a Shoot, raw: &serde_json::Value) -> ShootUpdate<'a> {
    ShootUpdate::new(shoot, Some(Sent::Value(raw)), &shared.scheduler_names)
}

/// Drops the assumption of `key` and takes what a read showed: bound (by this bind or
/// another), still pending, or gone.
fn apply_read(shared: &Shared, key: &str, read: Option<(Shoot, serde_json::Value)>) -> Resolved {
    match read {
        Some((current, raw)) => {
            // Bound meanwhile: the read version wins. Still pending: the bind did not happen.
            let update = read_update(shared, &current, &raw);
            shared.change(key, |cache| {
                let dropped = cache.forget_assumption(key);
                let read = cache.apply_read_update(update);
                Change {
                    enqueue: false,
                    retry_waiting: read.retry_waiting,
                    requeue: dropped.requeue,
                    freed_on: dropped.freed_on,
                }
            });
            Resolved::Current
        }
        None => {
            shared.change(key, |cache| cache.remove_shoot(key));
            Resolved::Gone
        }
    }
}

/// One scheduling attempt for one shoot.
pub(super) async fn run(shared: &Arc<Shared>, key: &str) -> Outcome {
    let uncertain = shared.lock().assumption(key).is_some_and(|a| a.uncertain);
    if uncertain {
        match resolve_uncertain(shared, key).await {
            Resolved::Current => {}
            Resolved::Gone => return Outcome::new(Attempt::Skipped, Requeue::Leave),
            Resolved::Unknown(error) => {
                return Outcome::announcing(
                    Attempt::Error,
                    Requeue::Retry,
                    Announce::ReadFailed { error },
                );
            }
        }
    }
    let now = Utc::now();
    // The decision is CPU work under the cache's lock: it runs on the blocking pool, never on
    // a thread that serves the watches, and within its budget.
    let decided = {
        let shared = Arc::clone(shared);
        let key = key.to_string();
        tokio::task::spawn_blocking(move || decide_and_assume(&shared, &key, now)).await
    };
    let (shoot, raw, verdict) = match decided {
        Ok(Some(decided)) => decided,
        Ok(None) => return Outcome::new(Attempt::Skipped, Requeue::Forget),
        Err(e) => {
            // a panic ends the process (the hook in `cli::run`); this is a cancelled task
            return Outcome::announcing(
                Attempt::Error,
                Requeue::Retry,
                Announce::DecisionFailed {
                    error: e.to_string(),
                },
            );
        }
    };
    let (entry, result) = match verdict {
        Ok(decided) => decided,
        Err(Held::Gated { reason, malformed }) => {
            // Not decided, not retried: a change of the gates (or of the shoot) queues it at
            // once, without a backoff to wait out.
            info!(%reason, "scheduling gated");
            if shared.leadership.is_leader() {
                shared.reporter.gated(&shoot, &reason, malformed);
            }
            return Outcome::new(Attempt::Gated, Requeue::Forget);
        }
        Err(Held::Deferred {
            entry,
            reason,
            retry_at,
        }) => {
            let entry = entry.unwrap_or_else(|| "none".into());
            tracing::Span::current().record("profile", entry.as_str());
            // Retry when the chain switches, not by polling; without a next switch the shoot
            // waits for a relevant change (or a new configuration).
            let retry_in = retry_at.map(|t| {
                (t - now)
                    .to_std()
                    .unwrap_or_default()
                    .max(Duration::from_secs(1))
            });
            info!(%reason, ?retry_in, "scheduling deferred");
            if shared.leadership.is_leader() {
                shared.reporter.deferred(&shoot, &reason);
            }
            let requeue = match retry_in {
                Some(d) => Requeue::After(d),
                None => Requeue::Forget,
            };
            return Outcome::new(Attempt::Deferred(retry_in), requeue).decided_by(&entry);
        }
    };
    tracing::Span::current().record("profile", entry.as_str());
    match result {
        Ok(decision) => {
            let seed = decision.seed.clone();
            let span = info_span!("bind", seed = %seed);
            bind_decision(shared, key, &shoot, raw.as_deref(), &decision)
                .instrument(span)
                .await
                .decided_by(&decision.profile)
        }
        Err(fit) => {
            let reason = fit.to_string();
            let (attempt, announce) = match &fit {
                FitError::OverBudget { stage, .. } => {
                    shared.metrics.over_budget(stage);
                    (Attempt::Error, Announce::OverBudget { reason })
                }
                _ => (Attempt::Unschedulable, Announce::DoesNotFit { reason }),
            };
            if shared.leadership.is_leader() {
                shared.reporter.failed(&shoot, &fit);
            }
            Outcome::announcing(attempt, Requeue::Backoff, announce).decided_by(&entry)
        }
    }
}

/// What a decision under the cache's lock found: the pending shoot, the object as sent, and
/// the chain entry with the decision, or why the chain defers it.
type Decided = (
    Arc<Shoot>,
    Option<Arc<str>>,
    Result<(String, Result<Decision, FitError>), Held>,
);

/// Why a pending shoot is not decided now.
enum Held {
    /// scheduling gates hold it: the gates, and a freeze that holds it too
    Gated { reason: String, malformed: bool },
    /// the chain defers it: the active entry, the reason, when to try again
    Deferred {
        entry: Option<String>,
        reason: String,
        retry_at: Option<chrono::DateTime<Utc>>,
    },
}

/// Decides `key` and assumes its placement under one hold of the cache's lock; `None` when
/// the shoot is no longer pending.
fn decide_and_assume(shared: &Shared, key: &str, now: chrono::DateTime<Utc>) -> Option<Decided> {
    let mut cache = shared.lock();
    // the gates were parsed when the shoot was applied, outside the lock
    let (shoot, gates) = cache.pending_with_gates(key)?;
    let raw = cache.pending_raw(key);
    if let Some(gated) = gates.reason() {
        cache.note_waiting(key, Waiting::Gated);
        // Both hold: the report says which.
        let reason = match shared.chain.select(now) {
            Selection::Deferred { reason, .. } => format!("{gated}; also deferred: {reason}"),
            Selection::Profile { .. } => gated,
        };
        let malformed = matches!(*gates, Gates::Malformed(_));
        return Some((shoot, raw, Err(Held::Gated { reason, malformed })));
    }
    let verdict = match shared.chain.select(now) {
        Selection::Profile { entry, profile } => {
            shared.note_active_profile(Some(entry));
            let deadline = Deadline::after(shared.decision_budget);
            let mut result = decide_within(&shoot, &cache.snapshot, profile, now, &deadline);
            // The record counts what each filter rejected: one more pass, only when asked.
            if shared.decision_record
                && let Ok(d) = &mut result
            {
                d.rejected_by_stage =
                    rejections_by_stage(&shoot, &cache.snapshot, profile, now).unwrap_or_default();
            }
            match &result {
                Ok(d) => cache.assume(&shoot, &d.seed),
                // no verdict on the seeds: nothing to note but why it waits
                Err(fit @ FitError::OverBudget { .. }) => {
                    cache.note_waiting(key, Waiting::NoFit(fit.reason_names()));
                }
                Err(fit) => {
                    cache.note_refused(key, fit);
                    cache.note_waiting(key, Waiting::NoFit(fit.reason_names()));
                }
            }
            Ok((entry.to_string(), result))
        }
        Selection::Deferred { reason, retry_at } => {
            cache.note_waiting(key, Waiting::Deferred);
            let entry = shared.chain.active(now).map(|e| e.id.clone());
            shared.note_active_profile(entry.as_deref());
            Err(Held::Deferred {
                entry,
                reason,
                retry_at,
            })
        }
    };
    Some((shoot, raw, verdict))
}

/// Binds a decided shoot (as the leader only) and settles its assumption by the result.
async fn bind_decision(
    shared: &Shared,
    key: &str,
    shoot: &Shoot,
    raw: Option<&str>,
    decision: &crate::schedule::Decision,
) -> Outcome {
    if !shared.leadership.is_leader() {
        shared.change(key, |cache| cache.forget_assumption(key));
        return Outcome::new(Attempt::NotLeader, Requeue::Now);
    }
    let seed = &decision.seed;
    let record = shared
        .decision_record
        .then(|| crate::controller::events::record(decision, Utc::now()));
    let result = bind::bind(
        &shared.client,
        shared.binding_mode,
        shoot,
        raw,
        seed,
        record.as_deref(),
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
            shared.metrics.bound(shoot);
            info!(score = %decision.winner().short(), "scheduled");
            // queued: the bind does not wait for its event
            shared
                .reporter
                .scheduled(shoot, decision, shared.name_profiles);
            Outcome::new(Attempt::Scheduled(seed.clone()), Requeue::Forget)
        }
        Err(BindError::Conflict) => {
            shared.metrics.conflicts.inc();
            drop_assumption(shared, key);
            reread(shared, key).await;
            Outcome::announcing(
                Attempt::Conflict,
                Requeue::ConflictRetry,
                Announce::Conflict,
            )
        }
        Err(BindError::AlreadyAssigned(other)) => {
            shared.metrics.conflicts.inc();
            drop_assumption(shared, key);
            reread(shared, key).await;
            info!(assigned = %other, "someone else assigned a seed meanwhile; leaving the shoot alone");
            Outcome::new(Attempt::LeftAlone(other), Requeue::Forget)
        }
        Err(BindError::NotFound) => {
            shared.change(key, |cache| cache.remove_shoot(key));
            debug!("shoot deleted before it could be bound");
            Outcome::new(Attempt::Skipped, Requeue::Forget)
        }
        Err(BindError::NotLeader) => {
            shared.change(key, |cache| cache.forget_assumption(key));
            info!("leadership lost before the bind was written; not binding");
            Outcome::new(Attempt::NotLeader, Requeue::Now)
        }
        Err(e) if e.outcome_unknown() => {
            // No answer proves the bind was refused: keep the slot, and read the shoot to
            // learn what happened; report only what the read shows.
            shared.lock().mark_uncertain(key);
            match settle_unknown(shared, key, seed).await {
                Settled::Bound => {
                    shared.refusals.bound(&shared.metrics);
                    shared.lock().confirm_bind(key);
                    shared.metrics.bound(shoot);
                    info!(score = %decision.winner().short(), error = %e, "scheduled (the bind's answer was lost; a read shows it applied)");
                    shared
                        .reporter
                        .scheduled(shoot, decision, shared.name_profiles);
                    Outcome::new(Attempt::Scheduled(seed.clone()), Requeue::Forget)
                }
                Settled::Other => {
                    shared.lock().note_waiting(key, Waiting::BindFailed);
                    // The read shows it was not applied. Answered with a 5xx, the request is over:
                    // a failed bind, reported as upstream reports one if the shoot still waits.
                    // Without an answer it may still be on its way, so nothing is said.
                    if matches!(e, BindError::Unknown { code: Some(_), .. })
                        && shared.lock().pending(key).is_some()
                    {
                        shared.reporter.bind_failed(shoot, &e);
                    }
                    Outcome::announcing(
                        Attempt::Error,
                        Requeue::Retry,
                        Announce::BindNotApplied {
                            error: e.to_string(),
                        },
                    )
                }
                Settled::Unknown => {
                    // what the watch shows next (or the next attempt's read) settles it
                    let unsettled = Unsettled {
                        seed: seed.clone(),
                        shoot: shoot.clone(),
                        note: shared.reporter.success_note(decision, shared.name_profiles),
                        profile: decision.profile.clone(),
                        since: tokio::time::Instant::now(),
                    };
                    shared
                        .unsettled
                        .lock()
                        .unwrap_or_else(|p| p.into_inner())
                        .insert(key.to_string(), unsettled);
                    Outcome::announcing(
                        Attempt::Unsettled,
                        Requeue::Retry,
                        Announce::BindOutcomeUnknown {
                            error: e.to_string(),
                        },
                    )
                }
            }
        }
        Err(e) => {
            drop_assumption(shared, key);
            shared.lock().note_waiting(key, Waiting::BindFailed);
            // As upstream: a refused bind (anything but 409) is reported like a failed decision.
            shared.reporter.bind_failed(shoot, &e);
            // Retried with growing delays, never sooner than the server asked.
            let requeue = match e.retry_after() {
                Some(at_least) => Requeue::RetryAtLeast(at_least),
                None => Requeue::Retry,
            };
            Outcome::announcing(Attempt::Error, requeue, Announce::BindFailed(e))
        }
    }
}

/// What a read after a bind without a conclusive answer showed.
pub(super) enum Settled {
    /// bound to the decided seed: the bind was applied
    Bound,
    /// pending still, bound elsewhere or gone: the cache now holds what the read showed, the
    /// assumption is dropped
    Other,
    /// the read failed too: the assumption stays, marked uncertain, until a later read
    Unknown,
}

/// Reads the shoot after a bind whose outcome is unknown.
pub(super) async fn settle_unknown(shared: &Shared, key: &str, seed: &str) -> Settled {
    let (ns, name) = key.split_once('/').unwrap_or(("", key));
    match read_to_settle(shared, ns, name).await {
        Ok(Some((current, raw))) if current.spec.seed_name.as_deref() == Some(seed) => {
            // the watch version of a bound shoot settles the assumption
            let update = read_update(shared, &current, &raw);
            shared.change(key, |cache| cache.apply_read_update(update).leaving_key());
            Settled::Bound
        }
        Ok(read) => {
            apply_read(shared, key, read);
            Settled::Other
        }
        Err(e) => {
            debug!(error = %e, "reading the shoot after an unanswered bind failed");
            Settled::Unknown
        }
    }
}

/// Stops counting a placement that will not happen; waiting shoots may now fit, but this one
/// is requeued (or not) by the attempt's [`Requeue`].
fn drop_assumption(shared: &Shared, key: &str) {
    shared.change(key, |cache| cache.forget_assumption(key).leaving_key());
}

/// Reads a shoot again after a conflict so the next decision (if any) sees what changed,
/// without waiting for the watch.
async fn reread(shared: &Shared, key: &str) {
    let (ns, name) = key.split_once('/').unwrap_or(("", key));
    match bind::read_shoot(&shared.client, ns, name, REQUEST_TIMEOUT).await {
        Ok(Some((current, raw))) => {
            let update = read_update(shared, &current, &raw);
            shared.change(key, |cache| cache.apply_read_update(update).leaving_key());
        }
        Ok(None) => shared.change(key, |cache| cache.remove_shoot(key)),
        Err(e) => {
            debug!(error = %e, "re-reading after a conflict failed; the watch will bring the change")
        }
    }
}
